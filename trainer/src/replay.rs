//! The replay window over a directory of self-play shards, and batch sampling with symmetry
//! augmentation.
//!
//! Shards (`selfplay::record`, DESIGN.md) are ordered by the time stamp in their name
//! (`sp-<writer>-<unix ms>-<seq>.npz`, ties by name), and the window is the most recent
//! `window(N)` samples of the `N` produced so far ([`WindowConfig::window_size`], KataGo's power
//! law). Training samples the window uniformly; each sample gets one of the 8 board symmetries,
//! applied to all planes and to the placement part (`0..S*S`) of the policy target alike (the
//! protocol actions `S*S..A` and the globals are unaffected).
//!
//! Positions whose policy target sums to zero (no full search, DESIGN.md: "full-search
//! positions only") get policy weight 0: they train the value head only. Positions without an
//! opponent's reply (`opponent_reply` -1) get opponent-policy weight 0. The value target is the
//! game's result, blended with the short-horizon value by [`BatchEncoding::short_value_weight`].

use crate::config::WindowConfig;
use crate::net::NetShape;
use anyhow::{bail, ensure, Context, Result};
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use renju_rules::{Point, Rule, Symmetry};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tch::Tensor;

/// One shard's training arrays, flattened row-major.
pub struct ShardData {
    /// The file.
    pub path: PathBuf,
    /// Positions `N`.
    pub len: usize,
    /// `[N, C, S, S]` 0/1.
    pub planes: Vec<u8>,
    /// `[N, G]`.
    pub globals: Vec<f32>,
    /// `[N, A]` visit distributions (rows sum to 1, or 0 for positions without a full search).
    pub policy: Vec<f32>,
    /// `[N, 3]` one-hot W/D/L.
    pub value: Vec<f32>,
    /// `[N]` the opponent's next action index, -1 when there is none.
    pub opponent_reply: Vec<i64>,
    /// `[N]` the short-horizon value (win - loss) in -1..=1.
    pub short_value: Vec<f32>,
}

impl ShardData {
    /// Reads and validates a shard: arrays against its metadata (`selfplay::record::read_shard`),
    /// then the metadata against the run (encoder version, board size, rule). Errors name the
    /// file.
    pub fn read(path: &Path, shape: NetShape, rule: Rule) -> Result<ShardData> {
        let shard = renju_selfplay::record::read_shard(path)?;
        let m = &shard.meta;
        ensure!(
            m.encoder_version == renju_selfplay::encode::ENCODER_VERSION,
            "shard {}: encoder version {} differs from this build's {}",
            path.display(),
            m.encoder_version,
            renju_selfplay::encode::ENCODER_VERSION
        );
        ensure!(
            m.size == shape.size,
            "shard {}: board size {} but the run trains size {}",
            path.display(),
            m.size,
            shape.size
        );
        ensure!(m.rule == rule, "shard {}: rule {:?} but the run trains {:?}", path.display(), m.rule, rule);
        let len = shard.len();
        let flat_u8 = |a: ndarray::Array4<u8>| a.as_standard_layout().iter().copied().collect::<Vec<u8>>();
        let flat = |a: ndarray::Array2<f32>| a.as_standard_layout().iter().copied().collect::<Vec<f32>>();
        let data = ShardData {
            path: path.to_path_buf(),
            len,
            planes: flat_u8(shard.planes),
            globals: flat(shard.globals),
            policy: flat(shard.policy),
            value: flat(shard.value),
            opponent_reply: shard.opponent_reply.to_vec(),
            short_value: shard.short_value.to_vec(),
        };
        ensure!(
            data.planes.len() == len * shape.planes * shape.points()
                && data.globals.len() == len * shape.globals
                && data.policy.len() == len * shape.actions
                && data.value.len() == len * 3
                && data.opponent_reply.len() == len
                && data.short_value.len() == len,
            "shard {}: array sizes do not match the network shape {:?}",
            path.display(),
            shape
        );
        Ok(data)
    }
}

/// Sort key of a shard file name: (unix ms from `sp-<writer>-<ms>-<seq>.npz`, or 0; the name).
fn shard_key(path: &Path) -> (u128, String) {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = name.strip_suffix(".npz").unwrap_or(&name);
    let mut parts = stem.rsplitn(3, '-');
    let _seq = parts.next();
    let ms = parts.next().and_then(|m| m.parse::<u128>().ok()).unwrap_or(0);
    (ms, name)
}

/// Counts of the replay window, for keeping the samples-per-new-sample ratio.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WindowStatus {
    /// Samples produced so far (all shards ever seen in the directory).
    pub total_samples: u64,
    /// Samples in the current window.
    pub window_samples: u64,
    /// Shards in the directory.
    pub shards: usize,
}

/// An immutable view of the window, shared with the loader thread.
pub struct WindowSnapshot {
    shards: Vec<Arc<ShardData>>,
    /// `ends[i]` = cumulative positions up to and including shard `i`.
    ends: Vec<u64>,
    /// Positions of the first shards that lie before the window.
    skip: u64,
    /// Window length.
    len: u64,
}

impl WindowSnapshot {
    /// Samples in the window.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the window is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Shard and row of window sample `u` (`0 <= u < len`).
    fn locate(&self, u: u64) -> (&ShardData, usize) {
        let g = self.skip + u;
        let i = self.ends.partition_point(|&e| e <= g);
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        (&self.shards[i], (g - start) as usize)
    }
}

/// The replay window over `<dir>/*.npz`.
pub struct ReplayWindow {
    dir: PathBuf,
    shape: NetShape,
    rule: Rule,
    cfg: WindowConfig,
    /// Every shard seen: key -> (path, positions).
    known: BTreeMap<(u128, String), (PathBuf, usize)>,
    /// The file names of `known`'s shards.
    known_names: HashSet<OsString>,
    /// Positions of `known`'s shards.
    known_samples: u64,
    /// Whether shards came or went since the window was last computed.
    changed: bool,
    /// Loaded shards (those inside the window).
    loaded: HashMap<PathBuf, Arc<ShardData>>,
    snapshot: Arc<WindowSnapshot>,
    /// Shards that failed validation since the last [`Self::take_rejected`]: (new path, error).
    rejected: Vec<(PathBuf, String)>,
}

impl ReplayWindow {
    /// A window over the shards in `dir` (nothing is read until [`Self::refresh`]).
    pub fn new(dir: &Path, shape: NetShape, rule: Rule, cfg: WindowConfig) -> ReplayWindow {
        ReplayWindow {
            dir: dir.to_path_buf(),
            shape,
            rule,
            cfg,
            known: BTreeMap::new(),
            known_names: HashSet::new(),
            known_samples: 0,
            changed: true,
            loaded: HashMap::new(),
            snapshot: Arc::new(WindowSnapshot { shards: vec![], ends: vec![], skip: 0, len: 0 }),
            rejected: Vec::new(),
        }
    }

    /// Shards that failed validation (corrupt, or made for another encoder, size or rule) and
    /// were moved into `<dir>/rejected/` since the last call, with the error that named each.
    pub fn take_rejected(&mut self) -> Vec<(PathBuf, String)> {
        std::mem::take(&mut self.rejected)
    }

    /// The shape of the shards' samples (the current encoder's, [`NetShape::current`]).
    pub fn shape(&self) -> NetShape {
        self.shape
    }

    /// The shard directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Picks up new shards, recomputes the window, reads the arrays of the shards inside it that
    /// are not held yet and drops the others from memory. Of a shard outside the window only its
    /// length is read, so the arrays held never exceed the window's shards however long the
    /// run's history (a resumed run does not read its whole history into memory). A shard that
    /// fails validation (corrupt, or made for another encoder, size or rule) is moved aside (see
    /// [`Self::take_rejected`]) and the window recomputed without it. A missing directory counts
    /// as empty.
    pub fn refresh(&mut self) -> Result<WindowStatus> {
        if self.dir.exists() {
            for path in renju_selfplay::record::list_new_shards(&self.dir, &self.known_names)? {
                self.changed = true;
                match renju_selfplay::record::read_shard_positions(&path) {
                    Ok(n) => {
                        self.known_names.insert(path.file_name().expect("a listed shard has a file name").to_owned());
                        self.known_samples += n as u64;
                        self.known.insert(shard_key(&path), (path, n));
                    }
                    Err(e) => self.reject(path, e)?,
                }
            }
        }
        if !self.changed {
            return Ok(self.status());
        }
        'window: loop {
            let want = self.cfg.window_size(self.known_samples);
            // Walk back from the newest shard until the window is covered.
            let mut chosen: Vec<(u128, String)> = Vec::new();
            let mut covered = 0u64;
            for (key, (_, n)) in self.known.iter().rev() {
                if covered >= want {
                    break;
                }
                chosen.push(key.clone());
                covered += *n as u64;
            }
            chosen.reverse();
            let mut shards = Vec::with_capacity(chosen.len());
            for key in &chosen {
                let path = self.known[key].0.clone();
                let data = match self.loaded.get(&path) {
                    Some(d) => d.clone(),
                    None => match ShardData::read(&path, self.shape, self.rule) {
                        Ok(d) => {
                            let d = Arc::new(d);
                            self.loaded.insert(path, d.clone());
                            d
                        }
                        Err(e) => {
                            if let Some((_, n)) = self.known.remove(key) {
                                self.known_samples -= n as u64;
                            }
                            self.known_names.remove(path.file_name().expect("a known shard has a file name"));
                            self.reject(path, e)?;
                            continue 'window;
                        }
                    },
                };
                shards.push(data);
            }
            self.loaded = chosen.iter().zip(&shards).map(|(k, d)| (self.known[k].0.clone(), d.clone())).collect();
            let mut ends = Vec::with_capacity(shards.len());
            let mut acc = 0u64;
            for s in &shards {
                acc += s.len as u64;
                ends.push(acc);
            }
            self.snapshot = Arc::new(WindowSnapshot { shards, ends, skip: covered - want, len: want });
            self.changed = false;
            return Ok(self.status());
        }
    }

    /// Moves a shard that failed validation into `<dir>/rejected/` and records it with its
    /// error: it is never trained on and never lost.
    fn reject(&mut self, path: PathBuf, error: anyhow::Error) -> Result<()> {
        let aside = self.dir.join("rejected");
        std::fs::create_dir_all(&aside).with_context(|| format!("creating {}", aside.display()))?;
        let dest = aside.join(path.file_name().expect("a shard file name"));
        std::fs::rename(&path, &dest)
            .with_context(|| format!("moving the rejected shard {} to {}", path.display(), dest.display()))?;
        self.rejected.push((dest, format!("{error:#}")));
        Ok(())
    }

    /// Positions whose arrays are held in memory: those of the window's shards.
    pub fn resident_samples(&self) -> u64 {
        self.loaded.values().map(|d| d.len as u64).sum()
    }

    /// Current counts.
    pub fn status(&self) -> WindowStatus {
        WindowStatus { total_samples: self.known_samples, window_samples: self.snapshot.len, shards: self.known.len() }
    }

    /// The current window, for sampling.
    pub fn snapshot(&self) -> Arc<WindowSnapshot> {
        self.snapshot.clone()
    }
}

/// Index permutations of the 8 symmetries: `perm[k][i]` = where point `i` goes under
/// `Symmetry(k)` (`renju_rules::Symmetry::apply`).
#[derive(Clone, Debug)]
pub struct SymmetryTable {
    size: usize,
    perm: Vec<Vec<usize>>,
}

impl SymmetryTable {
    /// For boards of side `size`.
    pub fn new(size: usize) -> SymmetryTable {
        let perm = Symmetry::ALL
            .iter()
            .map(|s| (0..size * size).map(|i| s.apply(Point::from_index(i, size), size).index(size)).collect())
            .collect();
        SymmetryTable { size, perm }
    }

    /// Writes sample planes `[C, S, S]` (u8) transformed by symmetry `k` into `out` (f32).
    pub fn planes(&self, k: usize, input: &[u8], out: &mut [f32]) {
        let p = self.size * self.size;
        let perm = &self.perm[k];
        for (src, dst) in input.chunks_exact(p).zip(out.chunks_exact_mut(p)) {
            for (i, &v) in src.iter().enumerate() {
                dst[perm[i]] = v as f32;
            }
        }
    }

    /// Writes a policy target `[A]` transformed by symmetry `k` into `out`: placements `0..S*S`
    /// permuted like the planes, protocol actions copied unchanged.
    pub fn policy(&self, k: usize, input: &[f32], out: &mut [f32]) {
        let p = self.size * self.size;
        let perm = &self.perm[k];
        for i in 0..p {
            out[perm[i]] = input[i];
        }
        out[p..].copy_from_slice(&input[p..]);
    }
}

/// One training batch (CPU tensors, f32): `planes [B, C, S, S]`, `globals [B, G]`,
/// `policy [B, A]`, `value [B, 3]`, `policy_weight [B]`, `opponent_policy [B, A]`,
/// `opponent_weight [B]`.
pub struct Batch {
    /// See the struct docs.
    pub planes: Tensor,
    /// See the struct docs.
    pub globals: Tensor,
    /// See the struct docs.
    pub policy: Tensor,
    /// See the struct docs.
    pub value: Tensor,
    /// 1 for positions with a policy target, 0 otherwise.
    pub policy_weight: Tensor,
    /// One-hot on the opponent's reply (the same symmetry as the policy), all zeros where
    /// there is none.
    pub opponent_policy: Tensor,
    /// 1 for positions with an opponent's reply, 0 otherwise.
    pub opponent_weight: Tensor,
}

/// The random stream of training step `step`: ChaCha8 seeded with `seed`, stream `step`, so
/// batch contents depend only on (seed, step, window), which makes resuming exact.
pub fn step_rng(seed: u64, step: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(step);
    rng
}

/// How training batches are made from the window: the inputs' encoding (the network's encoder
/// version, for version 3 the VCF-plane dropout, the stones-only dropout) and the value target's
/// blend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BatchEncoding {
    /// Encoder version of the batch planes (`renju_selfplay::encode::SUPPORTED_VERSIONS`).
    pub version: u32,
    /// Version 3: probability that a sample's two VCF planes are zeroed.
    pub vcf_plane_dropout: f64,
    /// Probability that a sample keeps only the stones-only inputs: its
    /// `renju_selfplay::stones_only::DROPOUT_PLANES`, and for version 3 its VCF planes, are
    /// zeroed.
    pub stones_only_dropout: f64,
    /// Share `w` of the short-horizon value in the value target, `(1 - w) * result + w * short`
    /// with the short value `s` as W/D/L `[(1 + s) / 2, 0, (1 - s) / 2]`
    /// (`TrainerConfig::short_value_weight`).
    pub short_value_weight: f32,
}

impl BatchEncoding {
    /// The shards' own encoding (`ENCODER_VERSION`), no dropout, the game's result as the value
    /// target.
    pub const CURRENT: BatchEncoding = BatchEncoding {
        version: renju_selfplay::encode::ENCODER_VERSION,
        vcf_plane_dropout: 0.0,
        stones_only_dropout: 0.0,
        short_value_weight: 0.0,
    };
}

/// Samples a batch of `batch` positions uniformly from `window` (whose shards have `shape`, the
/// current encoder's) with random symmetries (identity only when `augment` is false), its planes
/// converted to `enc.version` (`planes_for_version`: `[B, C_version, S, S]`; for version 3 each
/// sample's VCF planes are then zeroed with probability `enc.vcf_plane_dropout`). With
/// probability `enc.stones_only_dropout` a sample keeps only its stones-only inputs (its dropout
/// planes and VCF planes zeroed; the draws come first, and only when the probability is above
/// zero). Errors on an empty window or an unknown version.
pub fn sample_batch(
    window: &WindowSnapshot,
    shape: NetShape,
    sym: &SymmetryTable,
    batch: usize,
    augment: bool,
    enc: BatchEncoding,
    rng: &mut impl Rng,
) -> Result<Batch> {
    if window.is_empty() {
        bail!("the replay window is empty");
    }
    let (c, g, a, p) = (shape.planes, shape.globals, shape.actions, shape.points());
    let mut planes = vec![0f32; batch * c * p];
    let mut globals = vec![0f32; batch * g];
    let mut policy = vec![0f32; batch * a];
    let mut value = vec![0f32; batch * 3];
    let mut weight = vec![0f32; batch];
    let mut opponent = vec![0f32; batch * a];
    let mut opponent_weight = vec![0f32; batch];
    let mut one_hot = vec![0f32; a];
    for b in 0..batch {
        let u = rng.gen_range(0..window.len());
        let k = if augment { rng.gen_range(0..8usize) } else { 0 };
        let (shard, row) = window.locate(u);
        sym.planes(k, &shard.planes[row * c * p..(row + 1) * c * p], &mut planes[b * c * p..(b + 1) * c * p]);
        globals[b * g..(b + 1) * g].copy_from_slice(&shard.globals[row * g..(row + 1) * g]);
        let pol = &shard.policy[row * a..(row + 1) * a];
        sym.policy(k, pol, &mut policy[b * a..(b + 1) * a]);
        value[b * 3..b * 3 + 3].copy_from_slice(&shard.value[row * 3..row * 3 + 3]);
        if enc.short_value_weight > 0.0 {
            let (w, s) = (enc.short_value_weight, shard.short_value[row]);
            let short = [(1.0 + s) / 2.0, 0.0, (1.0 - s) / 2.0];
            for (v, t) in value[b * 3..b * 3 + 3].iter_mut().zip(short) {
                *v = (1.0 - w) * *v + w * t;
            }
        }
        weight[b] = if pol.iter().sum::<f32>() > 0.5 { 1.0 } else { 0.0 };
        if let Ok(reply) = usize::try_from(shard.opponent_reply[row]) {
            one_hot.fill(0.0);
            one_hot[reply] = 1.0;
            sym.policy(k, &one_hot, &mut opponent[b * a..(b + 1) * a]);
            opponent_weight[b] = 1.0;
        }
    }
    let (cv, _) = renju_selfplay::encode::input_shape(enc.version)?;
    let mut stones_only = vec![false; batch];
    if enc.stones_only_dropout > 0.0 {
        for (b, dropped) in stones_only.iter_mut().enumerate() {
            *dropped = rng.gen_bool(enc.stones_only_dropout);
            if *dropped {
                renju_selfplay::stones_only::zero_dropout_planes(&mut planes[b * c * p..(b + 1) * c * p], p);
            }
        }
    }
    if enc.version != renju_selfplay::encode::ENCODER_VERSION {
        planes =
            renju_selfplay::encode::planes_for_version(enc.version, &planes, &globals, batch, shape.size)?.into_owned();
    }
    if enc.version == 3 && (enc.vcf_plane_dropout > 0.0 || enc.stones_only_dropout > 0.0) {
        use renju_selfplay::encode::plane_v3;
        for (b, &stones_only) in stones_only.iter().enumerate() {
            let vcf_dropped = enc.vcf_plane_dropout > 0.0 && rng.gen_bool(enc.vcf_plane_dropout);
            if vcf_dropped || stones_only {
                let at = b * cv * p;
                planes[at + plane_v3::VCF_OWN * p..at + (plane_v3::VCF_OPPONENT + 1) * p].fill(0.0);
            }
        }
    }
    let (bi, ci, si) = (batch as i64, cv as i64, shape.size as i64);
    Ok(Batch {
        planes: Tensor::from_slice(&planes).view([bi, ci, si, si]),
        globals: Tensor::from_slice(&globals).view([bi, g as i64]),
        policy: Tensor::from_slice(&policy).view([bi, a as i64]),
        value: Tensor::from_slice(&value).view([bi, 3]),
        policy_weight: Tensor::from_slice(&weight),
        opponent_policy: Tensor::from_slice(&opponent).view([bi, a as i64]),
        opponent_weight: Tensor::from_slice(&opponent_weight),
    })
}

/// A background thread that prepares batches ahead of the training step (bounded queue of
/// `prefetch` batches), so the step never waits on sampling.
pub struct Loader {
    rx: crossbeam::channel::Receiver<Result<Batch>>,
    handle: Option<std::thread::JoinHandle<()>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

/// What the loader produces: batches for steps `first_step .. first_step + steps`.
pub struct LoadJob {
    /// The window to sample.
    pub window: Arc<WindowSnapshot>,
    /// Network shape.
    pub shape: NetShape,
    /// Batch size.
    pub batch: usize,
    /// Apply random symmetries.
    pub augment: bool,
    /// Encoding of the batches (`TrainerConfig::encoder_version`, `vcf_plane_dropout`,
    /// `stones_only_dropout`).
    pub encoding: BatchEncoding,
    /// Seed of [`step_rng`].
    pub seed: u64,
    /// First step.
    pub first_step: u64,
    /// Number of batches.
    pub steps: u64,
}

impl Loader {
    /// Starts the thread for one job.
    pub fn start(job: LoadJob, prefetch: usize) -> Result<Loader> {
        let (tx, rx) = crossbeam::channel::bounded(prefetch.max(1));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop2 = stop.clone();
        let handle = std::thread::Builder::new()
            .name("replay-loader".into())
            .spawn(move || {
                let sym = SymmetryTable::new(job.shape.size);
                for s in job.first_step..job.first_step + job.steps {
                    if stop2.load(std::sync::atomic::Ordering::Relaxed) {
                        return;
                    }
                    let mut rng = step_rng(job.seed, s);
                    let b = sample_batch(&job.window, job.shape, &sym, job.batch, job.augment, job.encoding, &mut rng);
                    let failed = b.is_err();
                    if tx.send(b).is_err() || failed {
                        return;
                    }
                }
            })
            .context("spawning the replay loader thread")?;
        Ok(Loader { rx, handle: Some(handle), stop })
    }

    /// The next batch (blocks until the loader has it).
    pub fn next(&self) -> Result<Batch> {
        self.rx.recv().context("the replay loader thread stopped")?
    }
}

impl Drop for Loader {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // Drain so a blocked send returns.
        while self.rx.try_recv().is_ok() {}
        if let Some(h) = self.handle.take() {
            // The thread ends after at most one more batch.
            while !h.is_finished() {
                while self.rx.try_recv().is_ok() {}
                std::thread::yield_now();
            }
            let _ = h.join();
        }
    }
}
