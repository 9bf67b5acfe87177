//! Output helpers: CSV to a string, markdown tables, XML escaping. Files are written through
//! the crash-safe layer `renju_fs`.

use anyhow::{Context, Result};

/// Serialises `rows` (records implementing `serde::Serialize`, with a header from the field
/// names) as CSV text. No rows give the header line alone (taken from `T::default()`).
pub fn csv_string<T: serde::Serialize + Default>(rows: &[T]) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    if rows.is_empty() {
        // The csv writer emits the header with the first record: write a default record and
        // keep the header line, so an empty table still says what its columns are.
        w.serialize(T::default()).context("serialising the CSV header")?;
    }
    for r in rows {
        w.serialize(r).context("serialising a CSV row")?;
    }
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("finishing CSV: {e}"))?;
    let text = String::from_utf8(bytes)?;
    if rows.is_empty() {
        let header = text.lines().next().unwrap_or("");
        return Ok(format!("{header}\n"));
    }
    Ok(text)
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

/// The opening of an SVG chart of scores: the `<svg>` element (`w` x `h` pixels), a `title` at
/// (`left`, `title_y`), and grid lines at scores 0, 0.25, 0.5 (dashed), 0.75 and 1 from `left`
/// to `right` with their labels, `y` mapping a score to its pixel row. The caller adds the data
/// and `</svg>`.
pub fn svg_score_chart(
    w: f64,
    h: f64,
    left: f64,
    right: f64,
    title_y: f64,
    title: &str,
    y: impl Fn(f64) -> f64,
) -> String {
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"10\">\n\
         <text x=\"{left}\" y=\"{title_y}\" font-size=\"13\">{}</text>\n",
        xml_escape(title)
    );
    for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
        s += &format!(
            "<line x1=\"{left}\" x2=\"{right}\" y1=\"{0:.1}\" y2=\"{0:.1}\" stroke=\"#ccc\"{1}/><text x=\"{2}\" y=\"{3:.1}\" text-anchor=\"end\">{t:.2}</text>\n",
            y(t),
            if t == 0.5 { " stroke-dasharray=\"4 3\" stroke-width=\"1.5\"" } else { "" },
            left - 4.0,
            y(t) + 3.0
        );
    }
    s
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
        #[derive(serde::Serialize, Default)]
        struct R {
            a: u32,
            b: String,
        }
        let c = csv_string(&[R { a: 1, b: "x,y".into() }]).unwrap();
        assert_eq!(c, "a,b\n1,\"x,y\"\n");
        // An empty table keeps its header (it used to be an empty file).
        assert_eq!(csv_string::<R>(&[]).unwrap(), "a,b\n");
    }
}
