//! Output helpers: crash-safe writes (temporary file + rename), CSV to a string, markdown tables.

use std::path::Path;

use anyhow::{Context, Result};

/// Writes `bytes` to `path` through `<path>.tmp` and a rename (atomic on one file system), so
/// readers never see a half-written file. Creates the parent directory. Errors name the file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating directory {}", dir.display()))?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}

/// Serialises `rows` (records implementing `serde::Serialize`, with a header from the field
/// names) as CSV text.
pub fn csv_string<T: serde::Serialize>(rows: &[T]) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r).context("serialising a CSV row")?;
    }
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("finishing CSV: {e}"))?;
    Ok(String::from_utf8(bytes)?)
}

/// A markdown table from a header and rows of cells (`|` in cells is escaped).
pub fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut out = format!("| {} |\n|{}\n", header.join(" | "), "---|".repeat(header.len()));
    for r in rows {
        out += &format!("| {} |\n", r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | "));
    }
    out
}

/// Escapes text for SVG/XML content.
pub fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_and_csv() {
        let t = markdown_table(&["a", "b"], &[vec!["1".into(), "x|y".into()]]);
        assert_eq!(t, "| a | b |\n|---|---|\n| 1 | x\\|y |\n");
        #[derive(serde::Serialize)]
        struct R {
            a: u32,
            b: String,
        }
        let c = csv_string(&[R { a: 1, b: "x,y".into() }]).unwrap();
        assert_eq!(c, "a,b\n1,\"x,y\"\n");
    }

    #[test]
    fn atomic_write_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/f.txt");
        write_atomic(&p, b"hi").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "hi");
        assert!(!d.path().join("sub/f.txt.tmp").exists());
    }
}
