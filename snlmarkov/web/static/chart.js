// The odds over one game as SVG: each seat's exact figure after every turn (a step line: the
// figure holds until the next turn), the big swings marked and numbered, a cursor on the replay's
// turn. Click or drag on the chart to move the replay there.
"use strict";

class OddsChart {
  // opts: {values: [[per seat] per state], classic, colours, names, swings, onpick(k)}
  constructor(container, opts) {
    Object.assign(this, opts);
    this.W = Math.max(560, Math.min(1400, container.clientWidth || 800)); this.H = 320;  // 1:1 on a wide screen
    this.m = { l: 46, r: 14, t: 14, b: 34 };
    this.n = this.values.length - 1;  // turns
    this.k = this.names.length;       // seats
    this.svg = el("svg", { viewBox: `0 0 ${this.W} ${this.H}`, class: "chart-svg", role: "img",
      "aria-label": this.classic ? "each seat's chance of winning after every turn" : "each seat's expected place after every turn" });
    container.replaceChildren(this.svg);
    this.draw();
  }

  x(i) { return this.m.l + ((this.W - this.m.l - this.m.r) * i) / Math.max(this.n, 1); }
  y(v) {
    const top = this.m.t, span = this.H - this.m.t - this.m.b;
    return this.classic ? top + (1 - v) * span : top + ((v - 1) / Math.max(this.k - 1, 1)) * span;
  }

  draw() {
    const svg = this.svg, { l, r, t, b } = this.m;
    const grid = el("g", { class: "chart-grid" }, svg);
    const ticks = this.classic ? [0, 0.25, 0.5, 0.75, 1] : Array.from({ length: this.k }, (_, i) => i + 1);
    for (const v of ticks) {
      el("line", { x1: l, x2: this.W - r, y1: this.y(v), y2: this.y(v) }, grid);
      const label = el("text", { x: l - 6, y: this.y(v) + 4, "text-anchor": "end", class: "chart-tick" }, grid);
      label.textContent = this.classic ? `${Math.round(100 * v)}%` : SNL.ordinal(v);
    }
    const step = niceStep(this.n);
    for (let i = 0; i <= this.n; i += step) {
      const label = el("text", { x: this.x(i), y: this.H - b + 16, "text-anchor": "middle", class: "chart-tick" }, grid);
      label.textContent = String(i);
    }
    const axis = el("text", { x: (l + this.W - r) / 2, y: this.H - 4, "text-anchor": "middle", class: "chart-axis" }, grid);
    axis.textContent = "turns played (all seats)";

    const lines = el("g", { class: "chart-lines" }, svg);
    for (let s = 0; s < this.k; s++) {
      const vals = this.values.map((row) => row[s]);
      let d = `M ${this.x(0)} ${this.y(vals[0])}`;
      for (let i = 1; i <= this.n; i++) d += ` H ${this.x(i)} V ${this.y(vals[i])}`;
      el("path", { d, class: "chart-line", stroke: this.colours[s], "data-seat": s, "data-values": JSON.stringify(vals) }, lines);
    }
    this.cursor = el("line", { class: "chart-cursor", y1: t, y2: this.H - b }, svg);
    const marks = el("g", { class: "chart-swings" }, svg);
    this.swings.forEach((sw, j) => {
      const cx = this.x(sw.turn + 1), cy = this.y(this.values[sw.turn + 1][sw.seat]);
      const g = el("g", { class: "chart-swing", "data-turn": sw.turn, tabindex: 0 }, marks);
      el("circle", { cx, cy, r: 10, fill: this.colours[sw.seat] }, g);
      const label = el("text", { x: cx, y: cy + 4, "text-anchor": "middle" }, g);
      label.textContent = String(j + 1);
      const tip = el("title", {}, g);
      tip.textContent = sw.story;
      g.addEventListener("click", () => this.onpick(sw.turn + 1));
    });
    // the whole plot area picks a turn (click, or drag)
    const hit = el("rect", { x: l, y: t, width: this.W - l - r, height: this.H - t - b, class: "chart-hit" }, svg);
    svg.insertBefore(hit, marks);
    const pick = (ev) => {
      const box = this.svg.getBoundingClientRect();
      const px = ((ev.clientX - box.left) / box.width) * this.W;
      const i = Math.round(((px - l) / (this.W - l - r)) * this.n);
      this.onpick(Math.max(0, Math.min(this.n, i)));
    };
    let dragging = false;
    hit.addEventListener("pointerdown", (ev) => { dragging = true; hit.setPointerCapture(ev.pointerId); pick(ev); });
    hit.addEventListener("pointermove", (ev) => { if (dragging) pick(ev); });
    hit.addEventListener("pointerup", () => { dragging = false; });
  }

  setTurn(i) {
    this.cursor.setAttribute("x1", this.x(i));
    this.cursor.setAttribute("x2", this.x(i));
  }
}

// a step between x labels giving about 8 of them: 1, 2, 5, 10, 20, 50, ...
function niceStep(n) {
  const raw = Math.max(1, n / 8), p = Math.pow(10, Math.floor(Math.log10(raw)));
  return [1, 2, 5, 10].map((f) => f * p).find((s) => s >= raw);
}

window.OddsChart = OddsChart;
