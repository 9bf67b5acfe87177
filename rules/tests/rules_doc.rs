//! `docs/RULES.md` is the rules specification that comments, tests, configs and docs cite as
//! "RULES.md §N". Two checks keep it and the code together:
//! - every citation in the workspace's sources (`.rs`, `.toml`, `.md`, `.sh`) names a numbered
//!   heading of `docs/RULES.md` (`## 4. ...` is §4, `### 4.2 ...` is §4.2). In a file that
//!   mentions RULES.md, every `§N` is read as a RULES.md section (`RULES.md §2`, a citation
//!   broken over two comment lines, a later `§4.4` in the same sentence), so such a file must
//!   name any other document's sections some other way; ranges (`§2–4`, `§5.3–5.4`) cite both
//!   ends;
//! - every example position in its tables (columns "Black stones", "White stones", "Move",
//!   "Verdict") gets the written verdict from the board and from the reference checker.

use renju_rules::board::ForbiddenKind;
use renju_rules::notation::{parse_moves, parse_point};
use renju_rules::{reference, Board, Color, Point, Rule, Verdict};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

const EXTENSIONS: [&str; 4] = ["rs", "toml", "md", "sh"];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the rules crate lies inside the workspace").to_path_buf()
}

fn rules_doc() -> String {
    let path = workspace_root().join("docs").join("RULES.md");
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The section numbers of the numbered headings: `## 4. Black's ...` -> `4`, `### 4.2 The ...`
/// -> `4.2`. Headings without a leading number are skipped.
fn heading_numbers(doc: &str) -> Vec<String> {
    doc.lines()
        .filter(|l| l.starts_with('#'))
        .filter_map(|l| {
            let title = l.trim_start_matches('#').trim_start();
            let number = title.split_whitespace().next()?.trim_end_matches('.');
            let numeric = !number.is_empty()
                && number.split('.').all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
            numeric.then(|| number.to_string())
        })
        .collect()
}

/// The section number starting at byte `i` of `text` (digits and single dots between digits),
/// with the byte just past it.
fn section_at(text: &str, i: usize) -> Option<(String, usize)> {
    let bytes = text.as_bytes();
    let mut end = i;
    while end < bytes.len() && (bytes[end].is_ascii_digit() || (bytes[end] == b'.' && end > i)) {
        end += 1;
    }
    // A trailing dot ends the sentence, not the number.
    while end > i && bytes[end - 1] == b'.' {
        end -= 1;
    }
    (end > i && bytes[i].is_ascii_digit()).then(|| (text[i..end].to_string(), end))
}

/// The sections cited by every `§` in `text`, with their 1-based line numbers: `§N`, `§ N`, and
/// the end of a range `§A–B` / `§A-B`.
fn sections_after_signs(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (pos, _) in text.match_indices('§') {
        let line = text[..pos].matches('\n').count() + 1;
        let mut i = pos + '§'.len_utf8();
        if text[i..].starts_with(' ') {
            i += 1;
        }
        let Some((first, end)) = section_at(text, i) else { continue };
        out.push((line, first));
        let rest = &text[end..];
        let dash = ['–', '-'].into_iter().find(|&d| rest.starts_with(d));
        if let Some(d) = dash {
            if let Some((last, _)) = section_at(text, end + d.len_utf8()) {
                out.push((line, last));
            }
        }
    }
    out
}

/// The sections a file cites: none unless it mentions RULES.md, else every `§` in it.
fn citations(text: &str) -> Vec<(usize, String)> {
    if text.contains("RULES.md") {
        sections_after_signs(text)
    } else {
        Vec::new()
    }
}

/// The workspace's source files with the given extensions, skipping build output (`target`),
/// hidden directories and symbolic links.
fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let kind = entry.file_type().unwrap_or_else(|e| panic!("cannot stat {}: {e}", entry.path().display()));
        if name.starts_with('.') || kind.is_symlink() {
            continue;
        }
        let path = entry.path();
        if kind.is_dir() {
            if name != "target" {
                source_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| EXTENSIONS.iter().any(|x| e == *x)) {
            out.push(path);
        }
    }
}

#[test]
fn citation_parser_reads_the_forms_in_use() {
    let cite = |t: &str| citations(t).into_iter().map(|(_, s)| s).collect::<Vec<_>>();
    assert_eq!(cite("size (RULES.md §1)."), ["1"]);
    assert_eq!(cite("the RULES.md §2 table; five first, §4.4)."), ["2", "4.4"]);
    assert_eq!(cite("(RULES.md §5.3–5.4) and RULES.md §2–4"), ["5.3", "5.4", "2", "4"]);
    assert_eq!(cite("/// exact (RULES.md\n/// §3: a line is a row)"), ["3"]);
    assert_eq!(cite("# draw (RULES.md §5 items 4 and 5, §5.7.)"), ["5", "5.7"]);
    assert!(cite("KataGo's paper, §3").is_empty(), "no RULES.md in the file: nothing is cited");
    let headings = heading_numbers("# Title\n## 1. Board\n### 4.2 The stone\n## Notes\n#### 5.10 Ten\n");
    assert_eq!(headings, ["1", "4.2", "5.10"]);
}

#[test]
fn every_rules_citation_names_a_section_of_docs_rules_md() {
    let doc = rules_doc();
    let headings = heading_numbers(&doc);
    let unique: BTreeSet<&String> = headings.iter().collect();
    assert_eq!(unique.len(), headings.len(), "docs/RULES.md numbers a section twice: {headings:?}");
    for top in ["1", "2", "3", "4", "5", "6"] {
        assert!(unique.contains(&top.to_string()), "docs/RULES.md has no section {top}");
    }

    let root = workspace_root();
    let mut files = Vec::new();
    source_files(&root, &mut files);
    files.sort();
    let mut cited = 0;
    let mut citing_files = 0;
    let mut missing = Vec::new();
    for file in &files {
        // Files that are not UTF-8 text cite nothing.
        let Ok(text) = fs::read_to_string(file) else { continue };
        let found = citations(&text);
        citing_files += usize::from(!found.is_empty());
        for (line, section) in found {
            cited += 1;
            if !unique.contains(&section) {
                let rel = file.strip_prefix(&root).unwrap_or(file);
                missing.push(format!("{}:{line}: §{section}", rel.display()));
            }
        }
    }
    assert!(cited > 0 && citing_files > 1, "no RULES.md citations found under {}", root.display());
    assert!(
        missing.is_empty(),
        "{} citation(s) name no heading of docs/RULES.md (sections: {headings:?}):\n{}",
        missing.len(),
        missing.join("\n")
    );
}

/// The stones of a table cell: points in notation, or `-` for none.
fn cell_stones(cell: &str, c: Color) -> Vec<(Point, Color)> {
    if cell == "-" {
        return Vec::new();
    }
    parse_moves(cell, 15)
        .unwrap_or_else(|e| panic!("bad stone list '{cell}': {e}"))
        .into_iter()
        .map(|p| (p, c))
        .collect()
}

fn parse_verdict(word: &str) -> Verdict {
    match word {
        "five" => Verdict::Five,
        "legal" => Verdict::Legal,
        "double-three" => Verdict::Forbidden(ForbiddenKind::DoubleThree),
        "double-four" => Verdict::Forbidden(ForbiddenKind::DoubleFour),
        "overline" => Verdict::Forbidden(ForbiddenKind::Overline),
        other => panic!("unknown verdict '{other}' (five, legal, double-three, double-four, overline)"),
    }
}

fn cells(line: &str) -> Vec<&str> {
    line.trim().trim_matches('|').split('|').map(str::trim).collect()
}

#[test]
fn example_positions_get_the_written_verdicts() {
    let doc = rules_doc();
    let lines: Vec<&str> = doc.lines().collect();
    let mut checked = 0;
    let mut i = 0;
    while i < lines.len() {
        let header = cells(lines[i]);
        let col = |name: &str| header.iter().position(|h| *h == name);
        let (Some(black), Some(white), Some(mv), Some(verdict)) =
            (col("Black stones"), col("White stones"), col("Move"), col("Verdict"))
        else {
            i += 1;
            continue;
        };
        // Skip the header and its separator row; the table ends at the first non-table line.
        i += 2;
        while i < lines.len() && lines[i].trim_start().starts_with('|') {
            let row = cells(lines[i]);
            let where_ = format!("docs/RULES.md line {}", i + 1);
            let mut st = cell_stones(row[black], Color::Black);
            st.extend(cell_stones(row[white], Color::White));
            let (who, point) = row[mv].split_once(' ').unwrap_or_else(|| panic!("{where_}: move '{}'", row[mv]));
            let c = match who {
                "Black" => Color::Black,
                "White" => Color::White,
                other => panic!("{where_}: '{other}' is not Black or White"),
            };
            let p = parse_point(point, 15).unwrap_or_else(|e| panic!("{where_}: {e}"));
            let expected = parse_verdict(row[verdict]);
            let board = Board::with_stones(15, Rule::Renju, &st).unwrap_or_else(|e| panic!("{where_}: {e}"));
            assert_eq!(board.classify(p, c), expected, "{where_}: {}", lines[i]);
            assert_eq!(reference::classify(15, Rule::Renju, &st, p, c), expected, "{where_} (reference)");
            checked += 1;
            i += 1;
        }
    }
    assert!(checked >= 10, "only {checked} example rows found in docs/RULES.md");
}
