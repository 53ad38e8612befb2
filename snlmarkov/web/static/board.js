// The board as SVG, drawn from the board's data: numbered boustrophedon squares,
// ladders, snakes, and the tokens, which walk square by square.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const CELL = 60;

function el(name, attrs, parent) {
  const node = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

const SNAKE_COLOURS = ["#2e7d32", "#c62828", "#6a1b9a", "#ef6c00", "#00838f", "#ad1457", "#558b2f", "#4527a0"];

class BoardView {
  constructor(container, board, colours) {
    this.board = board;
    this.colours = colours || [];  // cfg.colours: the hex of a named colour (records of the library)
    const n = board.size;
    this.cols = Math.ceil(Math.sqrt(n));
    this.rows = Math.ceil(n / this.cols);
    this.width = this.cols * CELL;
    this.height = this.rows * CELL;
    const pad = 8, start = 46;
    this.svg = el("svg", {
      viewBox: `${-pad} ${-pad} ${this.width + 2 * pad} ${this.height + 2 * pad + start}`,
      class: "board-svg", role: "img", "aria-label": `Board of ${n} squares`,
    });
    container.innerHTML = "";
    container.appendChild(this.svg);
    this.tokens = new Map();
    this.draw();
  }

  // centre of square k (0 = the start area under square 1)
  centre(k) {
    if (k <= 0) return { x: CELL * 0.5, y: this.height + 30 };
    const i = k - 1, r = Math.floor(i / this.cols);
    let c = i % this.cols;
    if (r % 2 === 1) c = this.cols - 1 - c;
    return { x: c * CELL + CELL / 2, y: (this.rows - 1 - r) * CELL + CELL / 2 };
  }

  draw() {
    const svg = this.svg, n = this.board.size;
    const defs = el("defs", {}, svg);
    const g = el("linearGradient", { id: "wood", x1: 0, y1: 0, x2: 1, y2: 1 }, defs);
    el("stop", { offset: "0", "stop-color": "#b07a3f" }, g);
    el("stop", { offset: "1", "stop-color": "#7a4f22" }, g);
    const shadow = el("filter", { id: "shadow", x: "-30%", y: "-30%", width: "160%", height: "160%" }, defs);
    el("feDropShadow", { dx: 1.5, dy: 2, stdDeviation: 1.6, "flood-opacity": 0.45 }, shadow);

    el("rect", { x: -6, y: -6, width: this.width + 12, height: this.height + 12, rx: 12, class: "board-frame" }, svg);
    const squares = el("g", { class: "squares" }, svg);
    const ends = new Set();
    for (const [s, e] of [...this.board.ladders, ...this.board.snakes]) { ends.add(s); }
    for (let k = 1; k <= n; k++) {
      const { x, y } = this.centre(k);
      const i = k - 1, r = Math.floor(i / this.cols), c = i % this.cols;
      const tone = (r + c) % 2 === 0 ? "sq-a" : "sq-b";
      el("rect", { x: x - CELL / 2, y: y - CELL / 2, width: CELL, height: CELL,
        class: `square ${tone}${k === n ? " sq-finish" : ""}`, "data-square": k }, squares);
      const t = el("text", { x: x - CELL / 2 + 5, y: y - CELL / 2 + 15, class: "sq-num" }, squares);
      t.textContent = k;
      if (k === n) {
        const star = el("text", { x, y: y + 12, class: "sq-star", "text-anchor": "middle" }, squares);
        star.textContent = "★";
      }
    }
    // start area
    const s0 = this.centre(0);
    el("rect", { x: 0, y: this.height + 10, width: Math.min(this.width, CELL * 4), height: 40, rx: 8, class: "start-area" }, svg);
    const st = el("text", { x: Math.min(this.width, CELL * 4) - 8, y: this.height + 35, class: "start-label", "text-anchor": "end" }, svg);
    st.textContent = "START";
    void s0;

    const jumps = el("g", { class: "jumps" }, svg);
    for (const [s, e] of this.board.ladders) this.drawLadder(jumps, s, e);
    this.board.snakes.forEach(([s, e], i) => this.drawSnake(jumps, s, e, SNAKE_COLOURS[i % SNAKE_COLOURS.length]));
    this.tokenLayer = el("g", { class: "tokens" }, svg);
  }

  drawLadder(parent, s, e) {
    const a = this.centre(s), b = this.centre(e);
    const dx = b.x - a.x, dy = b.y - a.y, len = Math.hypot(dx, dy);
    const nx = -dy / len * 9, ny = dx / len * 9;
    const g = el("g", { class: "ladder", "data-from": s, "data-to": e, filter: "url(#shadow)" }, parent);
    const steps = Math.max(2, Math.round(len / 22));
    for (let i = 1; i < steps; i++) {
      const t = i / steps;
      el("line", { x1: a.x + dx * t + nx, y1: a.y + dy * t + ny, x2: a.x + dx * t - nx, y2: a.y + dy * t - ny, class: "rung" }, g);
    }
    el("line", { x1: a.x + nx, y1: a.y + ny, x2: b.x + nx, y2: b.y + ny, class: "rail" }, g);
    el("line", { x1: a.x - nx, y1: a.y - ny, x2: b.x - nx, y2: b.y - ny, class: "rail" }, g);
  }

  snakePath(s, e) {
    const a = this.centre(s), b = this.centre(e);
    const dx = b.x - a.x, dy = b.y - a.y, len = Math.hypot(dx, dy);
    const nx = -dy / len, ny = dx / len, w = Math.min(34, len / 5);
    const p1 = { x: a.x + dx / 3 + nx * w, y: a.y + dy / 3 + ny * w };
    const p2 = { x: a.x + 2 * dx / 3 - nx * w, y: a.y + 2 * dy / 3 - ny * w };
    return { d: `M ${a.x} ${a.y} C ${p1.x} ${p1.y}, ${p2.x} ${p2.y}, ${b.x} ${b.y}`, a, b };
  }

  drawSnake(parent, s, e, colour) {
    const { d, a, b } = this.snakePath(s, e);
    const g = el("g", { class: "snake", "data-from": s, "data-to": e, filter: "url(#shadow)" }, parent);
    el("path", { d, class: "snake-body", stroke: colour }, g);
    el("path", { d, class: "snake-stripe" }, g);
    const ang = Math.atan2(a.y - b.y, a.x - b.x);
    const head = el("g", { transform: `translate(${a.x} ${a.y}) rotate(${ang * 180 / Math.PI})` }, g);
    el("ellipse", { cx: 3, cy: 0, rx: 11, ry: 8, fill: colour, class: "snake-head" }, head);
    el("circle", { cx: 7, cy: -4, r: 2.2, fill: "#fff" }, head);
    el("circle", { cx: 7, cy: 4, r: 2.2, fill: "#fff" }, head);
    el("circle", { cx: 7.6, cy: -4, r: 1.1, fill: "#111" }, head);
    el("circle", { cx: 7.6, cy: 4, r: 1.1, fill: "#111" }, head);
    el("path", { d: "M 13 0 L 19 0 M 19 0 L 22 -3 M 19 0 L 22 3", stroke: "#d32f2f", "stroke-width": 1.5, fill: "none" }, head);
    el("circle", { cx: b.x, cy: b.y, r: 3, fill: colour }, g);
  }

  // tokens -------------------------------------------------------------
  setSeats(seats) {
    this.tokenLayer.innerHTML = "";
    this.tokens.clear();
    this.seats = seats;
    const labels = SNL.tokenLabels(seats);
    seats.forEach((seat, i) => {
      const g = el("g", { class: "token", "data-seat": i }, this.tokenLayer);
      el("circle", { r: 13, fill: SNL.colourOf(seat.colour, this.colours), class: "token-body" }, g);
      el("circle", { r: 5, cx: -4, cy: -4, fill: "rgba(255,255,255,0.45)" }, g);
      const t = el("text", { class: `token-label${labels[i].length > 1 ? " two" : ""}`, "text-anchor": "middle", y: 4.5 }, g);
      t.textContent = labels[i];
      this.tokens.set(i, { g, square: 0, x: 0, y: 0 });
    });
  }

  offset(i, square, positions) {
    const here = [];
    positions.forEach((p, j) => { if (p === square) here.push(j); });
    if (square === 0) return { x: i * 30, y: 0 };
    if (here.length <= 1) return { x: 0, y: 0 };
    const k = here.indexOf(i), m = here.length;
    const ang = (2 * Math.PI * k) / m;
    return { x: Math.cos(ang) * 12, y: Math.sin(ang) * 12 };
  }

  place(i, x, y) {
    const t = this.tokens.get(i);
    if (!t) return;
    t.x = x; t.y = y;
    t.g.setAttribute("transform", `translate(${x} ${y})`);
  }

  setPositions(positions) {
    this.positions = positions.slice();
    positions.forEach((p, i) => {
      const c = this.centre(p), o = this.offset(i, p, positions);
      const t = this.tokens.get(i);
      if (t) { t.square = p; t.g.setAttribute("data-square", p); }
      this.place(i, c.x + o.x, c.y + o.y);
    });
  }

  setActive(seat) {
    for (const [i, t] of this.tokens) t.g.classList.toggle("active", i === seat);
    // the moving token is drawn on top
    const t = this.tokens.get(seat);
    if (t) this.tokenLayer.appendChild(t.g);
  }

  // animate token i from its point to (x, y) in ms
  glide(i, x, y, ms) {
    const t = this.tokens.get(i);
    const x0 = t.x, y0 = t.y;
    if (ms <= 0) { this.place(i, x, y); return Promise.resolve(); }
    return new Promise((resolve) => {
      const t0 = performance.now();
      const step = (now) => {
        const f = Math.min(1, (now - t0) / ms), e = f < 0.5 ? 2 * f * f : 1 - Math.pow(-2 * f + 2, 2) / 2;
        const hop = Math.sin(Math.PI * f) * Math.min(14, ms / 20);
        this.place(i, x0 + (x - x0) * e, y0 + (y - y0) * e - hop);
        if (f < 1) requestAnimationFrame(step); else { this.place(i, x, y); resolve(); }
      };
      requestAnimationFrame(step);
    });
  }

  async walk(i, from, to, stepMs) {
    const dir = to >= from ? 1 : -1;
    for (let k = from + dir; dir > 0 ? k <= to : k >= to; k += dir) {
      const c = this.centre(k);
      await this.glide(i, c.x, c.y, stepMs);
    }
    this.tokens.get(i).square = to;
  }

  async slide(i, to, ms, along) {
    const t = this.tokens.get(i);
    if (along) {  // follow the snake's body
      const path = el("path", { d: along, fill: "none" }, this.svg);
      const total = path.getTotalLength();
      await new Promise((resolve) => {
        const t0 = performance.now();
        const step = (now) => {
          const f = Math.min(1, (now - t0) / Math.max(ms, 1));
          const p = path.getPointAtLength(total * f);
          this.place(i, p.x, p.y);
          if (f < 1) requestAnimationFrame(step); else resolve();
        };
        requestAnimationFrame(step);
      });
      path.remove();
    } else {
      const c = this.centre(to);
      await this.glide(i, c.x, c.y, ms);
    }
    t.square = to;
  }
}

window.BoardView = BoardView;
