//! Output helpers: CSV to a string, markdown tables, XML escaping. Files are written through
//! the crash-safe layer `renju_fs`.

use anyhow::{Context, Result};

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
}
