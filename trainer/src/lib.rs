//! renju-trainer
