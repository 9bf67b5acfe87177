//! renju-selfplay
