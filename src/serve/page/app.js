// renju-zero web board: one page with three tabs (Play, Analyse, Replay) sharing one SVG board.
// Everything the board shows comes from the active tab's `view()`; the server is the authority on
// rules, so positions are always re-queried from /api/position rather than computed here.
"use strict";

const $ = (sel) => document.querySelector(sel);
const SVG_NS = "http://www.w3.org/2000/svg";

// ---------------------------------------------------------------- helpers

/** Creates an SVG element with attributes; `text` (optional) becomes its text content. */
function svgEl(tag, attrs = {}, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Creates an HTML element with attributes and text. */
function el(tag, attrs = {}, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Fetches JSON; a non-2xx answer throws an Error carrying the server's `error` message. */
async function api(path, body) {
  const init = body === undefined
    ? {}
    : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new Error(`cannot reach the server (${e.message})`);
  }
  let data = null;
  try {
    data = await res.json();
  } catch (_) {
    // A body that is not JSON is reported by status below.
  }
  if (!res.ok) throw new Error((data && data.error) || `${res.status} ${res.statusText}`);
  if (data && data.error) throw new Error(data.error);
  return data;
}

/** Column letters: a = column 0, no letter skipped. */
const colLetter = (x) => String.fromCharCode(97 + x);
const pointName = (x, y) => colLetter(x) + (y + 1);

/** Parses "h8" into {x, y} (y counted from the bottom), or null when it is not a point. */
function parsePoint(s, size) {
  const m = /^([a-z])(\d{1,2})$/.exec(String(s).trim().toLowerCase());
  if (!m) return null;
  const x = m[1].charCodeAt(0) - 97;
  const y = parseInt(m[2], 10) - 1;
  if (x < 0 || y < 0 || x >= size || y >= size) return null;
  return { x, y };
}

/** A value (win - loss, in [-1,1]) as a win rate in [0,1], draws counting half. */
const rateOfValue = (v) => (v + 1) / 2;

/**
 * Win rate in [0,1] of an answer node for the player to decide: the search's value (win - loss)
 * where the node was searched, else the value head's wdl (an unvisited candidate).
 */
function winRate(node) {
  if (!node) return null;
  if (typeof node.value === "number") return rateOfValue(node.value);
  if (Array.isArray(node.wdl) && node.wdl.length === 3) return node.wdl[0] + node.wdl[1] / 2;
  return null;
}

/** Button label of a protocol action; the action string itself stays in data-action. */
function actionLabel(a) {
  const m = /^choose-n:(\d+)$/.exec(a);
  return m ? `${m[1]} offers` : a;
}

const pct = (r, digits = 1) => (r === null || r === undefined ? "–" : (100 * r).toFixed(digits));
const cap = (s) => (s ? s[0].toUpperCase() + s.slice(1) : "");

/** Short visit count: 950, 1.2k, 34k, 1.1M. */
function shortCount(n) {
  if (n < 1000) return String(n);
  if (n < 10000) return (n / 1000).toFixed(1) + "k";
  if (n < 1e6) return Math.round(n / 1000) + "k";
  return (n / 1e6).toFixed(1) + "M";
}

function setStatus(node, text, kind = "") {
  node.textContent = text || "";
  node.className = "status" + (kind ? " " + kind : "");
}

/** Fills a <select> with values (and optional labels), selecting `selected` when present. */
function fillSelect(sel, values, selected, label = (v) => v) {
  sel.replaceChildren(...values.map((v) => el("option", { value: v }, label(v))));
  if (values.includes(selected)) sel.value = selected;
}

// ---------------------------------------------------------------- board

/**
 * The SVG board. `render(view)` redraws everything from a view object:
 * { size, stones: [{point,color,number}], lastMove, forbidden: [{point,kind}], offers: [point],
 *   candidates: [{point, rank, visits, rate, best}], ghosts: [{point,color,n}] }.
 * Grid units: one cell = 40, margin = 40 (coordinates live in the margin).
 */
const Board = {
  CELL: 40,
  MARGIN: 40,
  svg: null,
  size: 0,
  layers: {},
  onClick: null,
  onHover: null,

  init() {
    this.svg = $("#board");
    this.svg.addEventListener("click", (e) => {
      const t = e.target.closest(".pt");
      if (t && this.onClick) this.onClick(t.dataset.point);
    });
    this.svg.addEventListener("mouseover", (e) => {
      const t = e.target.closest(".pt");
      if (this.onHover) this.onHover(t ? t.dataset.point : null);
    });
    this.svg.addEventListener("mouseleave", () => this.onHover && this.onHover(null));
  },

  /** Pixel centre of point (x, y); y = 0 is the bottom row. */
  xy(x, y) {
    return [this.MARGIN + x * this.CELL, this.MARGIN + (this.size - 1 - y) * this.CELL];
  },

  /** Pixel centre of a point name, or null. */
  at(name) {
    const p = parsePoint(name, this.size);
    return p ? this.xy(p.x, p.y) : null;
  },

  /** Builds the static part (wood, grid, stars, coordinates, click targets) for a size. */
  build(size) {
    this.size = size;
    const { CELL, MARGIN } = this;
    const span = (size - 1) * CELL;
    const full = span + 2 * MARGIN;
    const svg = this.svg;
    svg.replaceChildren();
    svg.setAttribute("viewBox", `0 0 ${full} ${full}`);
    svg.dataset.size = size;

    const defs = svgEl("defs");
    defs.innerHTML = `
      <radialGradient id="g-black" cx="35%" cy="30%" r="70%">
        <stop offset="0%" stop-color="#6b6b6b"/><stop offset="45%" stop-color="#1c1c1c"/><stop offset="100%" stop-color="#000"/>
      </radialGradient>
      <radialGradient id="g-white" cx="35%" cy="30%" r="75%">
        <stop offset="0%" stop-color="#ffffff"/><stop offset="70%" stop-color="#e8e6e1"/><stop offset="100%" stop-color="#bdb9b0"/>
      </radialGradient>
      <linearGradient id="g-wood" x1="0" y1="0" x2="1" y2="1">
        <stop offset="0%" stop-color="#e6c07a"/><stop offset="50%" stop-color="#dbb063"/><stop offset="100%" stop-color="#cfa257"/>
      </linearGradient>
      <filter id="f-shadow" x="-30%" y="-30%" width="160%" height="160%">
        <feDropShadow dx="1.5" dy="2" stdDeviation="1.5" flood-opacity="0.35"/>
      </filter>`;
    svg.append(defs);
    svg.append(svgEl("rect", { x: 0, y: 0, width: full, height: full, rx: 6, fill: "url(#g-wood)" }));

    const grid = svgEl("g", { stroke: "#5a4325", "stroke-width": 1.2, "stroke-linecap": "square" });
    for (let i = 0; i < size; i++) {
      const c = MARGIN + i * CELL;
      grid.append(svgEl("line", { x1: MARGIN, y1: c, x2: MARGIN + span, y2: c }));
      grid.append(svgEl("line", { x1: c, y1: MARGIN, x2: c, y2: MARGIN + span }));
    }
    grid.append(svgEl("rect", { x: MARGIN, y: MARGIN, width: span, height: span, fill: "none", "stroke-width": 2 }));
    svg.append(grid);

    // Star points: the centre (odd sizes) and, on boards of 9 and more, four points 3 (or 2) in.
    const stars = [];
    const mid = (size - 1) / 2;
    if (size % 2 === 1) stars.push([mid, mid]);
    if (size >= 9) {
      const k = size >= 13 ? 3 : 2;
      stars.push([k, k], [size - 1 - k, k], [k, size - 1 - k], [size - 1 - k, size - 1 - k]);
    }
    for (const [x, y] of stars) {
      const [cx, cy] = this.xy(x, y);
      svg.append(svgEl("circle", { cx, cy, r: 4, fill: "#5a4325" }));
    }

    const coords = svgEl("g");
    for (let i = 0; i < size; i++) {
      const [cx] = this.xy(i, 0);
      coords.append(svgEl("text", { class: "coord", x: cx, y: MARGIN + span + MARGIN * 0.55 }, colLetter(i)));
      const [, cy] = this.xy(0, i);
      coords.append(svgEl("text", { class: "coord", x: MARGIN * 0.45, y: cy }, String(i + 1)));
    }
    svg.append(coords);

    // Dynamic layers, drawn in this order; click targets go last so they are always on top.
    this.layers = {};
    for (const name of ["stones", "marks", "cands", "ghosts"]) {
      this.layers[name] = svgEl("g", { class: `layer-${name}` });
      svg.append(this.layers[name]);
    }
    const pts = svgEl("g", { class: "layer-pts" });
    for (let x = 0; x < size; x++) {
      for (let y = 0; y < size; y++) {
        const [cx, cy] = this.xy(x, y);
        pts.append(svgEl("rect", {
          class: "pt", "data-point": pointName(x, y),
          x: cx - CELL / 2, y: cy - CELL / 2, width: CELL, height: CELL,
        }));
      }
    }
    svg.append(pts);
  },

  render(view) {
    if (view.size !== this.size) this.build(view.size);
    const R = this.CELL * 0.46;
    const showNumbers = $("#show-numbers").checked;
    const { stones: ls, marks, cands, ghosts } = this.layers;
    ls.replaceChildren();
    marks.replaceChildren();
    cands.replaceChildren();
    ghosts.replaceChildren();

    for (const s of view.stones || []) {
      const c = this.at(s.point);
      if (!c) continue;
      const g = svgEl("g", { class: "stone", "data-point": s.point, "data-color": s.color });
      g.append(svgEl("circle", {
        cx: c[0], cy: c[1], r: R, fill: `url(#g-${s.color})`, filter: "url(#f-shadow)",
        stroke: s.color === "white" ? "#9c978c" : "#000", "stroke-width": 0.6,
      }));
      const last = s.point === view.lastMove;
      if (showNumbers && s.number) {
        g.append(svgEl("text", {
          class: "num", x: c[0], y: c[1] + 1,
          fill: last ? "#e0312b" : s.color === "black" ? "#fff" : "#111",
          "font-size": s.number >= 100 ? 13 : 16,
        }, String(s.number)));
      } else if (last) {
        g.append(svgEl("circle", { cx: c[0], cy: c[1], r: 5, fill: "#e0312b" }));
      }
      ls.append(g);
    }

    // Pending fifth-move offers: translucent black stones with a ring marker.
    for (const p of view.offers || []) {
      const c = this.at(p);
      if (!c) continue;
      const g = svgEl("g", { class: "offer", "data-point": p });
      g.append(svgEl("circle", { cx: c[0], cy: c[1], r: R, fill: "url(#g-black)", opacity: 0.45 }));
      g.append(svgEl("circle", { cx: c[0], cy: c[1], r: R * 0.45, fill: "none", stroke: "#ffd54a", "stroke-width": 3 }));
      marks.append(g);
    }

    // Black's forbidden points: red crosses.
    for (const f of view.forbidden || []) {
      const c = this.at(f.point);
      if (!c) continue;
      const d = this.CELL * 0.2;
      const g = svgEl("g", { class: "forbidden", "data-point": f.point, stroke: "#d32f2f", "stroke-width": 3.5, "stroke-linecap": "round" });
      g.append(svgEl("title", {}, `${f.point}: forbidden (${f.kind})`));
      g.append(svgEl("line", { x1: c[0] - d, y1: c[1] - d, x2: c[0] + d, y2: c[1] + d }));
      g.append(svgEl("line", { x1: c[0] - d, y1: c[1] + d, x2: c[0] + d, y2: c[1] - d }));
      marks.append(g);
    }

    // Analysis candidates: the best in green, the others in blue fading with rank.
    for (const k of view.candidates || []) {
      const c = this.at(k.point);
      if (!c) continue;
      const g = svgEl("g", { class: "candidate" + (k.best ? " best" : ""), "data-point": k.point });
      g.append(svgEl("circle", {
        cx: c[0], cy: c[1], r: R * 0.95,
        fill: k.best ? "#2e7d32" : "#1e5fa8",
        "fill-opacity": k.best ? 0.9 : Math.max(0.45, 0.85 - 0.08 * k.rank),
        stroke: k.best ? "#ffeb3b" : "#fff", "stroke-width": k.best ? 2.5 : 1,
      }));
      g.append(svgEl("text", { class: "cand-text", x: c[0], y: c[1] - 6 }, pct(k.rate, 0)));
      g.append(svgEl("text", { class: "cand-text", x: c[0], y: c[1] + 8, "font-size": 9 }, shortCount(k.visits)));
      cands.append(g);
    }

    // Principal-variation ghosts: translucent numbered stones.
    for (const gh of view.ghosts || []) {
      const c = this.at(gh.point);
      if (!c) continue;
      const g = svgEl("g", { class: "ghost", "data-point": gh.point });
      g.append(svgEl("circle", { cx: c[0], cy: c[1], r: R, fill: `url(#g-${gh.color})`, opacity: 0.7 }));
      g.append(svgEl("text", {
        class: "ghost-num", x: c[0], y: c[1] + 1, fill: gh.color === "black" ? "#fff" : "#111",
      }, String(gh.n)));
      ghosts.append(g);
    }
  },
};

// ---------------------------------------------------------------- shared state

const App = {
  info: null,
  size: 15,
  tab: "play",
  tabs: {},

  /** Redraws the board from the active tab. */
  draw() {
    const t = this.tabs[this.tab];
    Board.render(t.view());
  },

  setTab(name) {
    this.tab = name;
    for (const b of document.querySelectorAll(".tab")) b.classList.toggle("active", b.dataset.tab === name);
    for (const p of document.querySelectorAll(".pane")) p.classList.toggle("active", p.id === `pane-${name}`);
    const t = this.tabs[name];
    if (t.shown) t.shown();
    this.draw();
  },
};

/** An empty view of the current size. */
const emptyView = (size) => ({ size, stones: [], offers: [], forbidden: [], candidates: [], ghosts: [], lastMove: null });

/** The board view of a /api/position answer (forbidden marks only while Black places a stone). */
function positionView(size, pos) {
  if (!pos) return emptyView(size);
  const blackPlaces = pos.color === "black" && pos.placeable && !pos.outcome;
  return {
    size,
    stones: pos.stones || [],
    lastMove: pos.lastMove,
    offers: pos.offers || [],
    forbidden: blackPlaces ? pos.forbidden || [] : [],
    candidates: [],
    ghosts: [],
  };
}

// ---------------------------------------------------------------- Play

const Play = {
  rule: "renju",
  protocol: "rif",
  side: "first",
  moves: [],
  human: [], // human[i]: whether moves[i] was the human's decision
  pos: null,
  token: 0, // bumped by New game / Takeback so stale answers are dropped

  init() {
    $("#new-game").addEventListener("click", () => this.newGame());
    $("#takeback").addEventListener("click", () => this.takeback());
  },

  view() {
    return positionView(App.size, this.pos);
  },

  setBusy(b) {
    document.body.dataset.busy = b ? "1" : "0";
  },

  setPhase(p) {
    document.body.dataset.phase = p;
  },

  newGame() {
    this.rule = $("#rule").value;
    this.protocol = $("#protocol").value;
    this.side = $("#side").value;
    this.moves = [];
    this.human = [];
    this.pos = null;
    $("#ai-info").textContent = "";
    this.token++;
    this.setBusy(false);
    this.refresh(this.token);
  },

  /** Removes the last human decision and every AI decision after it. */
  takeback() {
    const k = this.human.lastIndexOf(true);
    if (k < 0) {
      setStatus($("#status"), "Nothing of yours to take back.", "error");
      return;
    }
    this.moves = this.moves.slice(0, k);
    this.human = this.human.slice(0, k);
    $("#ai-info").textContent = "";
    this.token++;
    this.setBusy(false);
    this.refresh(this.token);
  },

  request(moves) {
    return { rule: this.rule, size: App.size, protocol: this.protocol, moves };
  },

  /** Adopts a position answer (with the normalised move list) and shows it. */
  adopt(pos) {
    this.pos = pos;
    if (Array.isArray(pos.moves)) {
      this.moves = pos.moves.slice();
      while (this.human.length < this.moves.length) this.human.push(false);
      this.human.length = this.moves.length;
    }
    $("#moves").textContent = this.moves.join(" ");
    const fc = pos.firstColor;
    if (fc) {
      const mine = this.side === "first" ? fc : fc === "black" ? "white" : "black";
      $("#you").textContent = `You are the ${this.side} player, holding ${cap(mine)} now.`;
    }
  },

  /** Queries the current position, shows it, and lets the AI decide when it is its turn. */
  async refresh(token) {
    let pos;
    try {
      pos = await api("/api/position", this.request(this.moves));
    } catch (e) {
      if (token !== this.token) return;
      setStatus($("#status"), e.message, "error");
      return;
    }
    if (token !== this.token) return;
    this.adopt(pos);
    this.showTurn();
    if (App.tab === "play") App.draw();
    if (this.phase() === "ai") this.aiMove(token);
  },

  phase() {
    const pos = this.pos;
    if (!pos) return "";
    if (pos.outcome || !pos.toDecide) return "over";
    return pos.toDecide === this.side ? "human" : "ai";
  },

  /** Status line, action buttons and phase marker for the current position. */
  showTurn() {
    const pos = this.pos;
    const phase = this.phase();
    this.setPhase(phase);
    const acts = $("#actions");
    acts.replaceChildren();
    if (phase === "over") {
      const text = pos.outcome ? pos.outcome.text : pos.prompt || "The game is over.";
      setStatus($("#status"), `Game over: ${text}`, "over");
      return;
    }
    if (phase === "human") {
      const how = pos.placeable
        ? (pos.actions || []).length ? "click a point or choose an action below" : "click a point"
        : "choose an action below";
      // The server's pick-offer prompt already says to click an offer.
      const tail = pos.decision === "pick-offer" ? "" : ` (${how})`;
      setStatus($("#status"), `Your decision — ${pos.prompt}${tail}.`);
      for (const a of pos.actions || []) {
        const b = el("button", { class: "action", "data-action": a }, actionLabel(a));
        b.addEventListener("click", () => this.humanDecides(a));
        acts.append(b);
      }
    } else {
      setStatus($("#status"), `AI is thinking — ${pos.prompt}`);
    }
  },

  /** Appends a human decision when the server accepts it; on refusal the old position stays. */
  async humanDecides(action) {
    if (this.phase() !== "human" || document.body.dataset.busy === "1") return;
    const token = this.token;
    const moves = [...this.moves, action];
    let pos;
    this.setBusy(true);
    try {
      pos = await api("/api/position", this.request(moves));
    } catch (e) {
      if (token === this.token) {
        this.setBusy(false);
        setStatus($("#status"), e.message, "error");
      }
      return;
    }
    if (token !== this.token) return;
    this.setBusy(false);
    this.human = [...this.human, true];
    this.moves = moves;
    this.adopt(pos);
    this.showTurn();
    if (App.tab === "play") App.draw();
    if (this.phase() === "ai") this.aiMove(token);
  },

  click(point) {
    if (document.body.dataset.busy === "1") return;
    if (this.phase() !== "human") return;
    if (!this.pos.placeable) {
      setStatus($("#status"), `${this.pos.prompt} — choose one of the buttons.`, "error");
      return;
    }
    this.humanDecides(point);
  },

  async aiMove(token) {
    this.setBusy(true);
    const seconds = Math.max(0.05, parseFloat($("#seconds").value) || 1);
    let ans;
    try {
      ans = await api("/api/analyze", { ...this.request(this.moves), seconds, top: 5 });
    } catch (e) {
      if (token !== this.token) return;
      this.setBusy(false);
      setStatus($("#status"), `AI failed: ${e.message}`, "error");
      return;
    }
    if (token !== this.token) return;
    const best = ans.candidates && ans.candidates[0];
    if (!best) {
      this.setBusy(false);
      setStatus($("#status"), "AI gave no candidate.", "error");
      return;
    }
    const rate = winRate(best) ?? winRate(ans.root);
    const info = $("#ai-info");
    info.replaceChildren(
      el("span", {}, `AI (${ans.color || "?"}) chose `),
      el("b", {}, best.action),
      el("span", {}, ` · win rate ${pct(rate)}% · ${ans.visits ?? best.visits ?? "?"} visits`),
      el("div", { class: "pv" }, "PV: " + (best.pv || [best.action]).join(" ")),
    );
    let pos;
    const moves = [...this.moves, best.action];
    try {
      pos = await api("/api/position", this.request(moves));
    } catch (e) {
      if (token !== this.token) return;
      this.setBusy(false);
      setStatus($("#status"), `The AI's decision ${best.action} was refused: ${e.message}`, "error");
      return;
    }
    if (token !== this.token) return;
    this.setBusy(false);
    this.human = [...this.human, false];
    this.moves = moves;
    this.adopt(pos);
    this.showTurn();
    if (App.tab === "play") App.draw();
    // Protocols can give the AI several decisions in a row.
    if (this.phase() === "ai") this.aiMove(token);
  },
};

// ---------------------------------------------------------------- Analyse

const Analyse = {
  // The position is either `moves` (decisions replayed by the protocol) or, after free editing,
  // `free` = {black: [points], white: [points]} sent as alternating initialStones.
  moves: [],
  free: null,
  size: 15,
  pos: null, // last /api/position answer for the current position (null when not available)
  localStones: null, // stones drawn locally when the server gives no position for free stones
  answer: null, // latest analysis answer
  hoverPv: null, // candidate whose PV is shown as ghosts
  running: false,
  es: null,
  token: 0,

  init() {
    $("#an-load").addEventListener("click", () => this.load());
    $("#an-undo").addEventListener("click", () => this.undo());
    $("#an-clear").addEventListener("click", () => {
      this.setPosition([], null);
    });
    $("#an-start").addEventListener("click", () => this.start());
    $("#an-stop").addEventListener("click", () => this.stop());
    $("#an-rule").addEventListener("change", () => this.setPosition(this.moves, this.free));
    $("#an-protocol").addEventListener("change", () => {
      this.setPosition(this.free ? [] : this.moves, null);
    });
    const tbody = $("#an-candidates tbody");
    tbody.addEventListener("mouseover", (e) => {
      const tr = e.target.closest("tr");
      if (tr) this.showPv(tr.dataset.action);
    });
    tbody.addEventListener("mouseleave", () => this.showPv(null));
    tbody.addEventListener("click", (e) => {
      const tr = e.target.closest("tr");
      if (tr) this.playAction(tr.dataset.action);
    });
    this.updateButtons();
  },

  view() {
    const v = this.pos ? positionView(this.size, this.pos) : emptyView(this.size);
    if (!this.pos && this.localStones) v.stones = this.localStones;
    const a = this.answer;
    if (a) {
      if (!v.forbidden.length && a.color === "black" && Array.isArray(a.forbidden)) v.forbidden = a.forbidden;
      v.candidates = (a.candidates || [])
        .filter((c) => parsePoint(c.action, this.size))
        .map((c, i) => ({ point: c.action, rank: i, visits: c.visits, rate: winRate(c), best: i === 0 }));
      const hov = this.hoverPv && (a.candidates || []).find((c) => c.action === this.hoverPv);
      if (hov) {
        // Ghost colours alternate per placed point, starting with the deciding player's colour.
        let color = a.color || "black";
        let n = 0;
        for (const m of hov.pv || [hov.action]) {
          if (!parsePoint(m, this.size)) continue;
          v.ghosts.push({ point: m, color, n: ++n });
          color = color === "black" ? "white" : "black";
        }
        v.candidates = v.candidates.filter((c) => c.point !== hov.action);
      }
    }
    return v;
  },

  shown() {},

  /** Rule, size and protocol/initialStones/moves of the current position (a /api/position body). */
  base() {
    const b = { rule: $("#an-rule").value, size: this.size };
    if (this.free) {
      // initialStones need the free opening, which is the server's default when no protocol is given.
      const s = [];
      for (let i = 0; i < this.free.black.length; i++) {
        s.push(this.free.black[i]);
        if (i < this.free.white.length) s.push(this.free.white[i]);
      }
      b.initialStones = s;
      b.moves = [];
    } else {
      b.protocol = $("#an-protocol").value;
      b.moves = this.moves.slice();
    }
    return b;
  },

  /** Whether the free stones can be sent as alternating initialStones. */
  freeValid() {
    if (!this.free) return true;
    const nb = this.free.black.length;
    const nw = this.free.white.length;
    return nb === nw || nb === nw + 1;
  },

  writeTextarea() {
    $("#an-moves").value = this.free ? this.base().initialStones.join(" ") : this.moves.join(" ");
  },

  /**
   * Switches to a new position: validates it with the server (on refusal the old one stays and
   * the message is shown), redraws, and restarts analysis when running.
   */
  async setPosition(moves, free) {
    const old = { moves: this.moves, free: this.free };
    this.moves = moves;
    this.free = free;
    const token = ++this.token;
    this.closeStream();
    this.answer = null;
    this.hoverPv = null;
    this.renderAnswer();
    if (!this.freeValid()) {
      const nb = free.black.length;
      const nw = free.white.length;
      this.pos = null;
      this.localStones = this.freeStones();
      setStatus($("#an-status"),
        `${nb} black and ${nw} white stones cannot be sent as alternating stones (Black needs as many as White or one more); add or erase stones.`,
        "error");
      this.writeTextarea();
      this.showPosition();
      return;
    }
    let pos;
    try {
      pos = await api("/api/position", this.base());
    } catch (e) {
      if (token !== this.token) return;
      this.moves = old.moves;
      this.free = old.free;
      setStatus($("#an-status"), e.message, "error");
      if (this.running) this.restartStream();
      return;
    }
    if (token !== this.token) return;
    this.pos = pos;
    this.localStones = null;
    if (!this.free && Array.isArray(pos.moves)) this.moves = pos.moves.slice();
    this.writeTextarea();
    this.showPosition();
    if (this.running) this.restartStream();
  },

  /** The free stones as a stone list for drawing without the server. */
  freeStones() {
    const out = [];
    const f = this.free || { black: [], white: [] };
    f.black.forEach((p, i) => out.push({ point: p, color: "black", number: 2 * i + 1 }));
    f.white.forEach((p, i) => out.push({ point: p, color: "white", number: 2 * i + 2 }));
    return out;
  },

  /** Status line and action buttons of the shown position. */
  showPosition() {
    const pos = this.pos;
    const acts = $("#an-actions");
    acts.replaceChildren();
    if (pos) {
      if (pos.outcome) setStatus($("#an-status"), `Game over: ${pos.outcome.text}`, "over");
      else {
        setStatus($("#an-status"), pos.prompt || "");
        for (const a of pos.actions || []) {
          const b = el("button", { class: "an-action", "data-action": a }, actionLabel(a));
          b.addEventListener("click", () => this.playAction(a));
          acts.append(b);
        }
      }
    }
    if (App.tab === "analyse") App.draw();
  },

  /** Stones currently on the board, from the server's answer or drawn locally. */
  currentStones() {
    return this.pos ? this.pos.stones || [] : this.localStones || [];
  },

  /** Free stones from what is on the board (in placement order). */
  toFree() {
    if (this.free) return { black: [...this.free.black], white: [...this.free.white] };
    const st = [...this.currentStones()].sort((a, b) => (a.number || 0) - (b.number || 0));
    return {
      black: st.filter((s) => s.color === "black").map((s) => s.point),
      white: st.filter((s) => s.color === "white").map((s) => s.point),
    };
  },

  click(point) {
    const mode = $("#an-mode").value;
    const here = this.currentStones().find((s) => s.point === point);
    if (mode === "alternate") {
      if (this.free) {
        if (here) return;
        const f = this.toFree();
        (f.black.length <= f.white.length ? f.black : f.white).push(point);
        this.setPosition([], f);
        return;
      }
      // Clicking the last stone takes it back; other occupied points are ignored.
      if (here) {
        if (this.moves.length && this.moves[this.moves.length - 1] === point) this.undo();
        return;
      }
      this.playAction(point);
      return;
    }
    const f = this.toFree();
    f.black = f.black.filter((p) => p !== point);
    f.white = f.white.filter((p) => p !== point);
    if (mode === "black") f.black.push(point);
    else if (mode === "white") f.white.push(point);
    else if (!here) return;
    this.setPosition([], f);
  },

  /** Appends a decision (point or action) to the move list (Alternate editing). */
  playAction(a) {
    if (!a) return;
    if (this.free) {
      if (!parsePoint(a, this.size)) return;
      const f = this.toFree();
      (f.black.length <= f.white.length ? f.black : f.white).push(a);
      this.setPosition([], f);
      return;
    }
    this.setPosition([...this.moves, a], null);
  },

  undo() {
    if (this.free) {
      const f = this.toFree();
      // Remove the most recent stone of the alternation: White's when the counts are equal.
      if (f.white.length >= f.black.length && f.white.length) f.white.pop();
      else f.black.pop();
      this.setPosition([], f.black.length || f.white.length ? f : null);
      return;
    }
    if (this.moves.length) this.setPosition(this.moves.slice(0, -1), null);
  },

  /** Parses the textarea ("h8 i9 j10" or comma separated) into moves. */
  load() {
    const items = $("#an-moves").value.split(/[\s,;]+/).map((s) => s.trim().toLowerCase()).filter(Boolean);
    this.setPosition(items, null);
  },

  /** Loads a position from elsewhere (Replay) and starts analysing it. */
  open({ rule, size, protocol, moves }) {
    if (rule) $("#an-rule").value = rule;
    if (protocol) $("#an-protocol").value = protocol;
    this.size = size || App.size;
    this.running = true;
    this.updateButtons();
    this.setPosition(moves.slice(), null);
  },

  start() {
    this.running = true;
    this.updateButtons();
    this.restartStream();
  },

  stop() {
    this.running = false;
    this.closeStream();
    this.updateButtons();
    this.renderAnswer();
  },

  updateButtons() {
    $("#an-start").disabled = this.running;
    $("#an-stop").disabled = !this.running;
  },

  closeStream() {
    if (this.es) {
      this.es.close();
      this.es = null;
    }
  },

  /** (Re)starts the continuous search of the current position through the event stream. */
  restartStream() {
    this.closeStream();
    if (!this.freeValid()) return;
    if (this.pos && this.pos.outcome) {
      setStatus($("#an-status"), `Game over: ${this.pos.outcome.text} — nothing to analyse.`, "over");
      this.running = false;
      this.updateButtons();
      return;
    }
    const q = { ...this.base(), seconds: 3600, top: 8, reportEvery: 0.5 };
    const url = "/api/analyze/stream?q=" + encodeURIComponent(JSON.stringify(q));
    const es = new EventSource(url);
    this.es = es;
    es.onmessage = (ev) => {
      if (this.es !== es) return;
      let data;
      try {
        data = JSON.parse(ev.data);
      } catch (_) {
        return;
      }
      if (data.error) {
        this.closeStream();
        this.running = false;
        this.updateButtons();
        setStatus($("#an-status"), data.error, "error");
        return;
      }
      this.answer = data;
      const last = data.isDuringSearch === false || data.terminated;
      if (last) {
        // The final answer: close before EventSource reconnects (which would restart the search).
        this.closeStream();
        this.running = false;
        this.updateButtons();
      }
      this.renderAnswer();
      if (App.tab === "analyse") App.draw();
    };
    es.onerror = () => {
      if (this.es !== es) return;
      this.closeStream();
      this.running = false;
      this.updateButtons();
      this.explainStreamError(url);
    };
  },

  /**
   * EventSource hides the body of a refused request, so the URL is fetched once more to show the
   * server's message; should that start a search after all, the fetch is aborted at once.
   */
  async explainStreamError(url) {
    const token = this.token;
    let msg = "The analysis stream failed (is the server running?).";
    const ctl = new AbortController();
    try {
      const res = await fetch(url, { signal: ctl.signal });
      if (!res.ok) {
        const data = await res.json().catch(() => null);
        msg = (data && data.error) || `${res.status} ${res.statusText}`;
      }
    } catch (_) {
      // Unreachable server: keep the generic message.
    } finally {
      ctl.abort();
    }
    if (token === this.token) setStatus($("#an-status"), msg, "error");
  },

  /** Summary, VCF lines and candidates table of the latest answer. */
  renderAnswer() {
    const a = this.answer;
    const summary = $("#an-summary");
    const vcf = $("#an-vcf");
    const tbody = $("#an-candidates tbody");
    tbody.replaceChildren();
    if (!a) {
      summary.textContent = "";
      vcf.textContent = "";
      return;
    }
    const who = a.color ? cap(a.color) : cap(a.player || "");
    summary.replaceChildren(
      el("span", {}, `${who} to decide (${a.decision || "?"}) · `),
      el("b", {}, `win rate ${pct(winRate(a.root))}%`),
      el("span", { class: "muted" }, ` · ${a.visits ?? 0} visits · ${!a.isDuringSearch ? "final" : this.running ? "searching…" : "stopped"}`),
    );
    const lines = [];
    for (const color of ["black", "white"]) {
      const r = a.vcf && a.vcf[color];
      if (r && r.result && r.result !== "none") {
        lines.push(`${cap(color)} VCF: ${r.result}${r.line && r.line.length ? " — " + r.line.join(" ") : ""}`);
      }
    }
    vcf.textContent = lines.join("\n");
    vcf.style.whiteSpace = "pre-line";
    (a.candidates || []).forEach((c, i) => {
      const tr = el("tr", { "data-action": c.action, class: i === 0 ? "best" : "" });
      const cells = [
        String(i + 1), c.action, String(c.visits ?? ""), pct(winRate(c)),
        typeof c.lcb === "number" ? pct(Math.max(0, rateOfValue(c.lcb))) : "–",
        typeof c.prior === "number" ? pct(c.prior) : "–", (c.pv || []).join(" "),
      ];
      for (const t of cells) tr.append(el("td", {}, t));
      tr.lastChild.title = (c.pv || []).join(" ");
      tbody.append(tr);
    });
  },

  showPv(action) {
    if (action === this.hoverPv) return;
    this.hoverPv = action || null;
    if (App.tab === "analyse") App.draw();
  },
};

// ---------------------------------------------------------------- Replay

const Replay = {
  run: 0,
  games: [],
  game: null,
  step: 0,
  posCache: new Map(), // step -> position answer of the shown game
  pos: null,
  timer: null,
  token: 0,

  init() {
    $("#run").addEventListener("change", () => {
      this.run = parseInt($("#run").value, 10);
      this.game = null;
      $("#viewer").hidden = true;
      this.reload();
    });
    $("#follow").addEventListener("change", () => this.follow($("#follow").checked));
    $("#replay-first").addEventListener("click", () => this.go(0));
    $("#replay-prev").addEventListener("click", () => this.go(this.step - 1));
    $("#replay-next").addEventListener("click", () => this.go(this.step + 1));
    $("#replay-last").addEventListener("click", () => this.go(Infinity));
    $("#replay-range").addEventListener("input", (e) => this.go(parseInt(e.target.value, 10)));
    $("#replay-analyse").addEventListener("click", () => {
      if (!this.game) return;
      const g = this.game;
      App.setTab("analyse");
      Analyse.open({ rule: g.rule, size: g.size, protocol: g.protocol, moves: g.moves.slice(0, this.step) });
    });
    $("#curve-x").addEventListener("change", () => this.drawCurve());
    $("#curve-y").addEventListener("change", () => this.drawCurve());
    document.addEventListener("keydown", (e) => {
      if (App.tab !== "replay" || !this.game) return;
      const t = e.target;
      if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) return;
      const to = { ArrowLeft: this.step - 1, ArrowRight: this.step + 1, Home: 0, End: Infinity }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      this.go(to);
    });
    const runs = (App.info && App.info.runs) || [];
    if (!runs.length) {
      $("#replay-none").hidden = false;
      $("#replay-content").hidden = true;
      return;
    }
    $("#run").replaceChildren(...runs.map((r) => el("option", { value: r.index }, `${r.name} (${r.path})`)));
    this.run = runs[0].index;
  },

  view() {
    const size = this.game ? this.game.size || App.size : App.size;
    return positionView(size, this.pos);
  },

  loaded: false,
  shown() {
    if (!this.loaded && App.info && (App.info.runs || []).length) {
      this.loaded = true;
      this.reload();
    }
  },

  follow(on) {
    clearInterval(this.timer);
    this.timer = on ? setInterval(() => this.reload(), 5000) : null;
  },

  /** Re-fetches the run summary and the game list of the selected run. */
  async reload() {
    const run = this.run;
    const [runRes, gamesRes] = await Promise.allSettled([
      api(`/api/run?run=${run}`),
      api(`/api/games?run=${run}&limit=200`),
    ]);
    if (run !== this.run) return;
    if (runRes.status === "fulfilled") {
      const r = runRes.value;
      const gens = r.generations || [];
      $("#run-info").textContent = `${gens.length} generation${gens.length === 1 ? "" : "s"}, latest ${r.latest || "–"}`;
      this.setCurve(r.curve);
    } else {
      $("#run-info").textContent = runRes.reason.message;
    }
    if (gamesRes.status === "fulfilled") {
      this.games = gamesRes.value.games || [];
      this.renderGames();
    } else {
      $("#games").replaceChildren(el("li", { class: "muted" }, gamesRes.reason.message));
    }
  },

  /** One line of the game list: source, players, result, number of decisions. */
  describe(g) {
    const players = `${g.black ?? g.first} (B) vs ${g.white ?? g.second} (W)`;
    let result;
    if (g.winner === "black" || g.winner === "white") result = `${cap(g.winner)} wins`;
    else if (g.reason) result = "draw";
    else result = "no result";
    if (g.reason) result += ` (${g.reason})`;
    return `${g.source} · ${players} · ${result} · ${g.moves.length} moves`;
  },

  renderGames() {
    const list = $("#games");
    const sel = this.game && this.game.id;
    list.replaceChildren(...this.games.map((g, i) => {
      const li = el("li", { class: "game" + (g.id === sel ? " selected" : ""), "data-id": g.id }, this.describe(g));
      li.addEventListener("click", () => this.select(i));
      return li;
    }));
  },

  select(i) {
    this.game = this.games[i];
    this.posCache = new Map();
    this.pos = null;
    for (const li of document.querySelectorAll("#games .game")) li.classList.toggle("selected", li.dataset.id === this.game.id);
    $("#viewer").hidden = false;
    $("#replay-title").textContent = this.describe(this.game);
    const range = $("#replay-range");
    range.max = this.game.moves.length;
    this.go(this.game.moves.length);
  },

  /** Shows the position after `step` decisions of the selected game. */
  async go(step) {
    const g = this.game;
    if (!g) return;
    step = Math.max(0, Math.min(g.moves.length, step));
    this.step = step;
    $("#replay-range").value = step;
    $("#replay-step").textContent = `${step} / ${g.moves.length}` + (step ? ` · ${g.moves[step - 1]}` : "");
    const token = ++this.token;
    let pos = this.posCache.get(step);
    if (!pos) {
      try {
        pos = await api("/api/position", { rule: g.rule, size: g.size, protocol: g.protocol, moves: g.moves.slice(0, step) });
      } catch (e) {
        if (token === this.token) setStatus($("#replay-status"), e.message, "error");
        return;
      }
      if (g === this.game) this.posCache.set(step, pos);
    }
    if (token !== this.token) return;
    this.pos = pos;
    if (pos.outcome) setStatus($("#replay-status"), pos.outcome.text, "over");
    else setStatus($("#replay-status"), pos.prompt || "");
    if (App.tab === "replay") App.draw();
  },

  // ---- learning curve

  curve: null,

  /** Takes a new curve; column choices stay when the columns are unchanged. */
  setCurve(curve) {
    const same = this.curve && curve && JSON.stringify(this.curve.columns) === JSON.stringify(curve.columns);
    this.curve = curve;
    if (!curve || !Array.isArray(curve.columns)) {
      $("#curve-x").replaceChildren();
      $("#curve-y").replaceChildren();
      this.drawCurve();
      return;
    }
    if (!same) {
      const cols = curve.columns;
      const numeric = cols.filter((_, j) => curve.rows.some((r) => typeof r[j] === "number"));
      fillSelect($("#curve-x"), cols, cols[0]);
      fillSelect($("#curve-y"), cols, numeric.length ? numeric[numeric.length - 1] : cols[cols.length - 1]);
    }
    this.drawCurve();
  },

  /** Draws the selected y column against the selected x column, by hand, into #curve. */
  drawCurve() {
    const svg = $("#curve");
    svg.replaceChildren();
    const W = 400, H = 240, L = 48, R = 12, T = 22, B = 34;
    const c = this.curve;
    const msg = (t) => svg.append(svgEl("text", { class: "empty", x: W / 2, y: H / 2 }, t));
    if (!c || !c.rows || !c.rows.length) return msg("No learning curve yet.");
    const xi = c.columns.indexOf($("#curve-x").value);
    const yi = c.columns.indexOf($("#curve-y").value);
    const pts = c.rows
      .map((r, k) => [typeof r[xi] === "number" ? r[xi] : k, r[yi]])
      .filter(([x, y]) => typeof x === "number" && typeof y === "number" && isFinite(x) && isFinite(y));
    if (!pts.length) return msg("The chosen column has no numbers.");
    let [x0, x1] = [Math.min(...pts.map((p) => p[0])), Math.max(...pts.map((p) => p[0]))];
    let [y0, y1] = [Math.min(...pts.map((p) => p[1])), Math.max(...pts.map((p) => p[1]))];
    if (x0 === x1) { x0 -= 1; x1 += 1; }
    if (y0 === y1) { y0 -= 1; y1 += 1; }
    const yt = niceTicks(y0, y1, 5);
    const xt = niceTicks(x0, x1, 6);
    [y0, y1] = [Math.min(y0, yt[0]), Math.max(y1, yt[yt.length - 1])];
    const sx = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
    const sy = (y) => H - B - ((y - y0) / (y1 - y0)) * (H - T - B);
    for (const t of yt) {
      svg.append(svgEl("line", { class: "grid", x1: L, x2: W - R, y1: sy(t), y2: sy(t) }));
      svg.append(svgEl("text", { class: "tick", x: L - 4, y: sy(t) + 3, "text-anchor": "end" }, fmtTick(t)));
    }
    for (const t of xt) {
      if (t < x0 || t > x1) continue;
      svg.append(svgEl("line", { class: "axis", x1: sx(t), x2: sx(t), y1: H - B, y2: H - B + 4 }));
      svg.append(svgEl("text", { class: "tick", x: sx(t), y: H - B + 15, "text-anchor": "middle" }, fmtTick(t)));
    }
    svg.append(svgEl("line", { class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B }));
    svg.append(svgEl("line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B }));
    svg.append(svgEl("text", { class: "tick", x: W - R, y: H - 3, "text-anchor": "end" }, c.columns[xi] ?? "row"));
    svg.append(svgEl("text", { class: "tick", x: 4, y: 12 }, c.columns[yi]));
    svg.append(svgEl("polyline", { class: "series", points: pts.map(([x, y]) => `${sx(x)},${sy(y)}`).join(" ") }));
    if (pts.length <= 200) {
      for (const [x, y] of pts) {
        const d = svgEl("circle", { class: "dot", cx: sx(x), cy: sy(y), r: 2.5 });
        d.append(svgEl("title", {}, `${c.columns[xi]} ${x}: ${c.columns[yi]} ${y}`));
        svg.append(d);
      }
    }
  },
};

/** About `n` round tick values covering [lo, hi]. */
function niceTicks(lo, hi, n) {
  const raw = (hi - lo) / Math.max(1, n);
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || 10 * mag;
  const out = [];
  for (let t = Math.floor(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(+t.toPrecision(12));
  if (out[out.length - 1] < hi) out.push(+(out[out.length - 1] + step).toPrecision(12));
  return out;
}

function fmtTick(t) {
  const a = Math.abs(t);
  if (a >= 1e5 || (a > 0 && a < 1e-3)) return t.toExponential(1);
  return String(+t.toPrecision(4));
}

// ---------------------------------------------------------------- start

async function main() {
  document.body.dataset.busy = "0";
  Board.init();
  App.tabs = { play: Play, analyse: Analyse, replay: Replay };
  Board.onClick = (p) => {
    const t = App.tabs[App.tab];
    if (t.click) t.click(p);
  };
  Board.onHover = (p) => {
    $("#hover-point").textContent = p || "";
    if (App.tab === "analyse") {
      const a = Analyse.answer;
      const isCand = p && a && (a.candidates || []).some((c) => c.action === p);
      Analyse.showPv(isCand ? p : null);
    }
  };
  for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => App.setTab(b.dataset.tab));
  $("#show-numbers").addEventListener("change", () => App.draw());

  let info;
  try {
    info = await api("/api/info");
  } catch (e) {
    setStatus($("#status"), `Cannot load /api/info: ${e.message}`, "error");
    Board.render(emptyView(15));
    return;
  }
  App.info = info;
  App.size = info.size || 15;
  Analyse.size = App.size;
  $("#model").textContent = info.model || "";
  const rules = info.rules || ["renju"];
  const protocols = info.protocols || ["free"];
  fillSelect($("#rule"), rules, info.defaultRule || "renju");
  fillSelect($("#protocol"), protocols, info.defaultProtocol || "rif");
  fillSelect($("#an-rule"), rules, info.defaultRule || "renju");
  fillSelect($("#an-protocol"), protocols, "free");

  Play.init();
  Analyse.init();
  Replay.init();
  Board.render(emptyView(App.size));
  Analyse.setPosition([], null);
  Play.newGame();
}

main();
