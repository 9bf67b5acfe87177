//! Progress lines of the two halves on one terminal.

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::time::Duration;

/// A spinner line of `multi` with the given indicatif template.
pub(crate) fn bar(multi: &MultiProgress, template: &str) -> ProgressBar {
    let pb = multi.add(ProgressBar::new_spinner());
    pb.set_style(ProgressStyle::with_template(template).expect("valid template"));
    pb.enable_steady_tick(Duration::from_millis(250));
    pb
}
