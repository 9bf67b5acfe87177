//! The TOML run config under bad input: arbitrary text and the shipped configs
//! mutated (characters replaced, lines dropped, values swapped for other TOML values) parse or
//! fail with an error, never a panic; an error names the origin. Cases per property: proptest's
//! default 256, or `PROPTEST_CASES` (scripts/fuzz.sh runs more).

use proptest::prelude::*;
use renju_zero::pipeline::RunConfig;

const QUICK: &str = include_str!("../configs/quick.toml");
/// Every key, so that mutations reach every section and value type.
const DEFAULTS: &str = include_str!("../configs/defaults.toml");
const E2E: &str = include_str!("data/e2e.toml");

fn check(text: &str) -> Result<(), TestCaseError> {
    if let Err(e) = RunConfig::parse(text, "fuzz.toml") {
        let msg = format!("{e:#}");
        prop_assert!(msg.contains("fuzz.toml"), "{}", msg);
    }
    Ok(())
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        check(&text)?;
    }

    #[test]
    fn mutated_configs_never_panic(
        which in 0..3usize,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), "\\PC{0,3}"), 0..5),
        drop_line in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let mut text = [QUICK, DEFAULTS, E2E][which].to_string();
        for (i, s) in &edits {
            let mut at = i.index(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let end = at + text[at..].chars().next().map_or(0, char::len_utf8);
            text.replace_range(at..end, s);
        }
        if let Some(d) = drop_line {
            let lines: Vec<&str> = text.lines().collect();
            let k = d.index(lines.len().max(1));
            text = lines.iter().enumerate().filter(|(i, _)| *i != k).map(|(_, l)| *l).collect::<Vec<_>>().join("\n");
        }
        check(&text)?;
    }

    /// Structured: one `key = value` line of the e2e config gets another value of any TOML type.
    #[test]
    fn values_replaced_never_panic(line in any::<prop::sample::Index>(), value in prop_oneof![
        any::<i64>().prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| format!("{v:?}")),
        Just("nan".to_string()), Just("inf".to_string()), Just("-inf".to_string()),
        Just("true".to_string()),
        "\"[a-z0-9:,=-]{0,12}\"",
        Just("[1, 2]".to_string()), Just("{ a = 1 }".to_string()),
    ]) {
        let lines: Vec<&str> = E2E.lines().collect();
        let keyed: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].contains(" = ")).collect();
        let k = keyed[line.index(keyed.len())];
        let key = lines[k].split(" = ").next().unwrap();
        let text = lines.iter().enumerate().map(|(i, l)| if i == k { format!("{key} = {value}") } else { l.to_string() }).collect::<Vec<_>>().join("\n");
        check(&text)?;
    }
}
