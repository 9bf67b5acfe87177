//! Opening protocols (RULES.md §5.1–5.7, §5.9–5.11): the [`Protocol`] value, its string grammar
//! ([`FromStr`] / [`fmt::Display`] / serde, the one form used by the CLI, configs and shard
//! metadata) and the validation of its parameters. How each protocol plays out as decisions is
//! the [`crate::game::Game`] state machine's (module docs of [`crate::game`]).

use crate::opening::Opening;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// Largest N accepted for the "fifth move N offers" protocol (RULES.md §5 item 4).
pub const MAX_OFFERS: u8 = 10;

/// Opening protocols of RULES.md §5.1–5.7 and §5.9–5.11.
///
/// Written and parsed (also by serde) as the CLI/config strings `free`, `free-centre`, `swap1`,
/// `rif`, `fifth-n`, `fifth-n:N` (aliases `yamaguchi`, `yamaguchi:N`),
/// `designated:D4[,swap][,offers=K]` (`designated` / `designated:any` for `opening: None`),
/// `black-sets`, `lianhuan`, `soosorv:N[,D4]` (alias `soosõrv`; plain `soosorv` is the original
/// rule, N = 4), `taraguchi:N[,D4]` (plain `taraguchi` is the original rule, N = 5) and `swap2[:D4]`. [`fmt::Display`] writes the canonical form, which parses back to the
/// same value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// §5.1: stone 1 on the centre when `centre`, else anywhere; then alternation.
    Free { centre: bool },
    /// §5.2: after Black's first stone (anywhere), the player with White may swap colours.
    Swap1,
    /// §5.3: RIF: centre / 3x3 / 5x5, swap after stone 3, two non-symmetric fifth-move offers.
    Rif,
    /// §5.4: as RIF with N offers; `n: None` means tentative Black chooses N (1..=MAX_OFFERS)
    /// after stone 3, before the swap decision.
    FifthN { n: Option<u8> },
    /// §5.5: the first three stones are `opening` (None: any of the 26, chosen by the First
    /// player with a white stone-2 and a black stone-3 placement restricted to the canonical
    /// forms, see the module docs); then optionally the swap and `offers` fifth-move offers
    /// (0 or 1 = plain stone 5; at most [`MAX_OFFERS`]).
    Designated { opening: Option<Opening>, swap: bool, offers: u8 },
    /// §5.6: First places three stones (black, white, black); Second then chooses a colour.
    BlackSets,
    /// §5.7: Lianhuan consecutive-swap rule (seed 001).
    Lianhuan,
    /// §5.9: Soosõrv-N: the First player puts one of the 26 openings (`opening: Some` fixes it,
    /// as the opening study does); swap; White places stone 4 anywhere and declares 1..=`n`
    /// fifth-move offers; swap; Black places the offers, White keeps one.
    Soosorv { n: u8, opening: Option<Opening> },
    /// §5.10: Taraguchi-N: stones 1-4 in the central 1x1, 3x3, 5x5, 7x7, a swap offered after
    /// each; then Black either places stone 5 in the central 9x9 (swaps offered before and
    /// after it) or offers `n` fifth moves anywhere. `opening: Some` starts from that opening.
    Taraguchi { n: u8, opening: Option<Opening> },
    /// §5.11: Swap2: First places three stones; Second takes Black, takes White, or places two
    /// more stones and lets First choose the colour. `opening: Some` puts that opening's three
    /// stones on the board from the start (the opening study's Swap2 per opening).
    Swap2 { opening: Option<Opening> },
}

/// N of the original Soosõrv rule (`soosorv` without a number).
pub const SOOSORV_DEFAULT_N: u8 = 4;
/// N of the original Taraguchi rule (`taraguchi` without a number).
pub const TARAGUCHI_DEFAULT_N: u8 = 5;

/// A protocol whose parameters are out of range (RULES.md §5 items 4 and 5).
#[derive(Clone, Copy, Debug, thiserror::Error, PartialEq, Eq)]
pub enum InvalidProtocol {
    /// `fifth-n:N` with N outside `1..=MAX_OFFERS`.
    #[error("N = {0} offers is out of range 1..={MAX_OFFERS}")]
    OfferCount(u8),
    /// `designated:...,offers=K` with K above `MAX_OFFERS`.
    #[error("offers = {0} is out of range 0..={MAX_OFFERS}")]
    Offers(u8),
    /// `taraguchi:N` with N outside `2..=MAX_OFFERS` (with N = 1 the two choices after stone 4
    /// would be the same count).
    #[error("Taraguchi N = {0} offers is out of range 2..={MAX_OFFERS}")]
    TaraguchiOffers(u8),
    /// A designated opening that is not one of the 26.
    #[error("opening {0:?} does not exist (D1..D13, I1..I13)")]
    NoSuchOpening(Opening),
}

/// Error from parsing a [`Protocol`] string; names the text and what was wrong with it.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("bad protocol '{text}': {why}")]
pub struct ParseProtocolError {
    pub text: String,
    pub why: String,
}

impl Protocol {
    /// Check the parameters: N and offers in range, the opening number valid.
    pub fn validate(&self) -> Result<(), InvalidProtocol> {
        match self {
            Protocol::FifthN { n: Some(n) } | Protocol::Soosorv { n, .. } if *n == 0 || *n > MAX_OFFERS => {
                Err(InvalidProtocol::OfferCount(*n))
            }
            Protocol::Taraguchi { n, .. } if *n < 2 || *n > MAX_OFFERS => Err(InvalidProtocol::TaraguchiOffers(*n)),
            Protocol::Soosorv { opening: Some(o), .. }
            | Protocol::Taraguchi { opening: Some(o), .. }
            | Protocol::Swap2 { opening: Some(o) }
                if !o.is_valid() =>
            {
                Err(InvalidProtocol::NoSuchOpening(*o))
            }
            Protocol::Designated { offers, .. } if *offers > MAX_OFFERS => Err(InvalidProtocol::Offers(*offers)),
            Protocol::Designated { opening: Some(o), .. } if !o.is_valid() => Err(InvalidProtocol::NoSuchOpening(*o)),
            _ => Ok(()),
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Protocol::Free { centre: false } => f.write_str("free"),
            Protocol::Free { centre: true } => f.write_str("free-centre"),
            Protocol::Swap1 => f.write_str("swap1"),
            Protocol::Rif => f.write_str("rif"),
            Protocol::FifthN { n: None } => f.write_str("fifth-n"),
            Protocol::FifthN { n: Some(n) } => write!(f, "fifth-n:{n}"),
            Protocol::Designated { opening, swap, offers } => {
                write!(f, "designated:{}", opening.map_or("any", |o| o.code()))?;
                if *swap {
                    f.write_str(",swap")?;
                }
                if *offers > 0 {
                    write!(f, ",offers={offers}")?;
                }
                Ok(())
            }
            Protocol::BlackSets => f.write_str("black-sets"),
            Protocol::Lianhuan => f.write_str("lianhuan"),
            Protocol::Soosorv { n, opening } | Protocol::Taraguchi { n, opening } => {
                let name = if matches!(self, Protocol::Soosorv { .. }) { "soosorv" } else { "taraguchi" };
                write!(f, "{name}:{n}")?;
                if let Some(o) = opening {
                    write!(f, ",{o}")?;
                }
                Ok(())
            }
            Protocol::Swap2 { opening: None } => f.write_str("swap2"),
            Protocol::Swap2 { opening: Some(o) } => write!(f, "swap2:{o}"),
        }
    }
}

impl FromStr for Protocol {
    type Err = ParseProtocolError;
    /// Parses the strings listed on [`Protocol`] (case-insensitive, surrounding spaces ignored)
    /// and checks the parameters ([`Protocol::validate`]).
    fn from_str(text: &str) -> Result<Protocol, ParseProtocolError> {
        let err = |why: String| ParseProtocolError { text: text.to_string(), why };
        let t = text.trim();
        let lower = t.to_ascii_lowercase();
        let (head, arg) = match lower.split_once(':') {
            Some((h, a)) => (h.trim(), Some(a.trim())),
            None => (lower.as_str(), None),
        };
        let no_arg = |p: Protocol| match arg {
            None => Ok(p),
            Some(a) => Err(err(format!("'{head}' takes no argument (got ':{a}')"))),
        };
        let p = match head {
            "free" => no_arg(Protocol::Free { centre: false })?,
            "free-centre" | "free-center" => no_arg(Protocol::Free { centre: true })?,
            "swap1" => no_arg(Protocol::Swap1)?,
            "rif" => no_arg(Protocol::Rif)?,
            "black-sets" => no_arg(Protocol::BlackSets)?,
            "lianhuan" => no_arg(Protocol::Lianhuan)?,
            "swap2" => match arg {
                None | Some("any") => Protocol::Swap2 { opening: None },
                Some(o) => Protocol::Swap2 { opening: Some(o.parse::<Opening>().map_err(|e| err(e.to_string()))?) },
            },
            "soosorv" | "soosõrv" | "taraguchi" => {
                let soosorv = head != "taraguchi";
                let default_n = if soosorv { SOOSORV_DEFAULT_N } else { TARAGUCHI_DEFAULT_N };
                let (n_text, opening_text) = match arg {
                    None => (None, None),
                    Some(a) => match a.split_once(',') {
                        Some((n, o)) => (Some(n.trim()), Some(o.trim())),
                        None => (Some(a), None),
                    },
                };
                let n = match n_text {
                    None => default_n,
                    Some(a) => a.parse().map_err(|_| err(format!("N '{a}' is not a number 1..={MAX_OFFERS}")))?,
                };
                let opening = match opening_text {
                    None | Some("any") => None,
                    Some(o) => Some(o.parse::<Opening>().map_err(|e| err(e.to_string()))?),
                };
                if soosorv {
                    Protocol::Soosorv { n, opening }
                } else {
                    Protocol::Taraguchi { n, opening }
                }
            }
            "fifth-n" | "yamaguchi" => match arg {
                None => Protocol::FifthN { n: None },
                Some(a) => {
                    let n: u8 = a.parse().map_err(|_| err(format!("N '{a}' is not a number 1..={MAX_OFFERS}")))?;
                    Protocol::FifthN { n: Some(n) }
                }
            },
            "designated" => {
                let (mut opening, mut swap, mut offers) = (None, false, 0u8);
                let mut seen_opening = false;
                // Use the original-case text for the arguments (Chinese names are unaffected
                // by case anyway; opening codes and names are matched case-insensitively).
                let raw_arg = t.split_once(':').map(|(_, a)| a.trim());
                for part in raw_arg.into_iter().flat_map(|a| a.split(',')).map(str::trim) {
                    let lp = part.to_ascii_lowercase();
                    if lp == "swap" {
                        swap = true;
                    } else if let Some(v) = lp.strip_prefix("offers=") {
                        offers = v
                            .trim()
                            .parse()
                            .map_err(|_| err(format!("offers '{v}' is not a number 0..={MAX_OFFERS}")))?;
                    } else if seen_opening {
                        return Err(err(format!("unexpected '{part}' (one opening, then 'swap' and/or 'offers=K')")));
                    } else {
                        seen_opening = true;
                        if lp != "any" {
                            opening = Some(part.parse::<Opening>().map_err(|e| err(e.to_string()))?);
                        }
                    }
                }
                Protocol::Designated { opening, swap, offers }
            }
            other => {
                return Err(err(format!(
                    "unknown protocol '{other}' (expected free, free-centre, swap1, rif, fifth-n[:N], \
                     yamaguchi[:N], designated:<opening>[,swap][,offers=K], black-sets, lianhuan, \
                     soosorv[:N[,<opening>]], taraguchi[:N[,<opening>]] or swap2[:<opening>])"
                )))
            }
        };
        p.validate().map_err(|e| err(e.to_string()))?;
        Ok(p)
    }
}

impl Serialize for Protocol {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Protocol {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Protocol, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_strings_round_trip() {
        for s in [
            "free",
            "free-centre",
            "swap1",
            "rif",
            "fifth-n",
            "fifth-n:3",
            "designated:D4",
            "designated:any",
            "designated:I13,swap,offers=2",
            "designated:D1,offers=5",
            "black-sets",
            "lianhuan",
            "soosorv:8",
            "soosorv:3,D4",
            "taraguchi:10",
            "taraguchi:10,I13",
            "swap2",
            "swap2:D9",
        ] {
            let p: Protocol = s.parse().unwrap();
            assert_eq!(p.to_string(), s);
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<Protocol>(&json).unwrap(), p);
        }
        assert_eq!("yamaguchi".parse(), Ok(Protocol::FifthN { n: None }));
        assert_eq!("Yamaguchi:4".parse(), Ok(Protocol::FifthN { n: Some(4) }));
        assert_eq!(
            "designated:花月,swap".parse(),
            Ok(Protocol::Designated { opening: Some(Opening::Direct(4)), swap: true, offers: 0 })
        );
        assert_eq!("designated".parse(), Ok(Protocol::Designated { opening: None, swap: false, offers: 0 }));
        assert_eq!("soosorv".parse(), Ok(Protocol::Soosorv { n: 4, opening: None }));
        assert_eq!("Soosõrv:8".parse(), Ok(Protocol::Soosorv { n: 8, opening: None }));
        assert_eq!("soosorv:8,kagetsu".parse(), Ok(Protocol::Soosorv { n: 8, opening: Some(Opening::Direct(4)) }));
        assert_eq!("taraguchi".parse(), Ok(Protocol::Taraguchi { n: 5, opening: None }));
        assert_eq!("taraguchi:10,any".parse(), Ok(Protocol::Taraguchi { n: 10, opening: None }));
    }

    #[test]
    fn protocol_errors_name_the_text() {
        for (s, part) in [
            ("fifth-n:0", "N = 0"),
            ("fifth-n:x", "'x'"),
            ("designated:Q7", "Q7"),
            ("designated:D4,offers=11", "offers = 11"),
            ("renju", "'renju'"),
            ("rif:2", ":2"),
            ("soosorv:11", "N = 11"),
            ("soosorv:0", "N = 0"),
            ("soosorv:8,Q3", "Q3"),
            ("taraguchi:1", "Taraguchi N = 1"),
            ("taraguchi:11", "Taraguchi N = 11"),
            ("taraguchi:ten", "'ten'"),
            ("swap2:3", "'3'"),
        ] {
            let e = s.parse::<Protocol>().unwrap_err();
            assert_eq!(e.text, s);
            assert!(e.to_string().contains(part), "{e} should mention {part}");
        }
    }

    #[test]
    fn validation_errors_are_typed() {
        assert_eq!(Protocol::FifthN { n: Some(11) }.validate(), Err(InvalidProtocol::OfferCount(11)));
        assert_eq!(
            Protocol::Designated { opening: None, swap: false, offers: 11 }.validate(),
            Err(InvalidProtocol::Offers(11))
        );
        assert_eq!(Protocol::Rif.validate(), Ok(()));
        assert_eq!(Protocol::Soosorv { n: 11, opening: None }.validate(), Err(InvalidProtocol::OfferCount(11)));
        assert_eq!(Protocol::Taraguchi { n: 1, opening: None }.validate(), Err(InvalidProtocol::TaraguchiOffers(1)));
        assert_eq!(
            Protocol::Taraguchi { n: 10, opening: Some(Opening::Indirect(14)) }.validate(),
            Err(InvalidProtocol::NoSuchOpening(Opening::Indirect(14)))
        );
        assert_eq!(Protocol::Swap2 { opening: None }.validate(), Ok(()));
    }
}
