//! The progress lines of a run on the terminal: one spinner line per half of the pipeline,
//! rendered from its [`Report`]s, with the lines worth showing printed above them (on plain
//! stderr when the terminal is not one).

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use renju_zero::pipeline::{say, Half, Report, Reporter};
use std::sync::OnceLock;
use std::time::Duration;

/// Renders a run's [`Report`]s as progress lines.
pub struct Bars {
    multi: MultiProgress,
    selfplay: OnceLock<ProgressBar>,
    trainer: OnceLock<ProgressBar>,
}

impl Bars {
    pub fn new() -> Bars {
        Bars { multi: MultiProgress::new(), selfplay: OnceLock::new(), trainer: OnceLock::new() }
    }

    /// The spinner line of `half`, added the first time it is asked for.
    fn bar(&self, half: Half) -> &ProgressBar {
        let (cell, template) = match half {
            Half::Selfplay => (&self.selfplay, "{spinner} self-play  {msg}"),
            Half::Trainer => (&self.trainer, "{spinner} training   {msg}"),
        };
        cell.get_or_init(|| {
            let pb = self.multi.add(ProgressBar::new_spinner());
            pb.set_style(ProgressStyle::with_template(template).expect("valid template"));
            pb.enable_steady_tick(Duration::from_millis(250));
            pb
        })
    }
}

impl Reporter for Bars {
    fn report(&self, report: Report<'_>) {
        match report {
            Report::Started(half) => {
                self.bar(half);
            }
            Report::Stopped(half) => self.bar(half).finish(),
            Report::Selfplay { generation, progress: p } => {
                let s = p.seconds.max(1e-9);
                self.bar(Half::Selfplay).set_message(format!(
                    "gen {generation} | games {} | positions {} | {:.0} pos/s | {:.0} playouts/s | W/D/L first {}/{}/{}",
                    p.games,
                    p.positions,
                    p.positions as f64 / s,
                    p.playouts as f64 / s,
                    p.wins_first,
                    p.draws,
                    p.wins_second
                ));
            }
            Report::Waiting { generation, step, samples, waited, last } => {
                self.bar(Half::Trainer).set_message(format!(
                    "gen {generation} | step {step} | waiting for self-play samples ({samples} so far, {:.0}s) | loss {:.3} (policy {:.3}, value {:.3})",
                    waited.as_secs_f64(),
                    last.loss,
                    last.policy_loss,
                    last.value_loss
                ));
            }
            Report::Training { generation, last, window_samples } => {
                self.bar(Half::Trainer).set_message(format!(
                    "gen {generation} | step {} | loss {:.3} (policy {:.3}, value {:.3}) | lr {:.4} | {:.0} samples/s | window {window_samples}",
                    last.step, last.loss, last.policy_loss, last.value_loss, last.lr, last.samples_per_sec
                ));
            }
            Report::Line(line) => {
                if self.multi.is_hidden() {
                    say(line);
                } else {
                    self.multi.println(line).ok();
                }
            }
        }
    }
}
