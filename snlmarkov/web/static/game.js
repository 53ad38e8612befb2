// A game's page (/games/<id>, and /games/upload for a record file): the board with a replay,
// the exact odds over the whole game with its big swings, each player's luck, the verdict.
// Everything shown comes from the server's analysis (/api/games/<id>/analysis); nothing is re-derived.
"use strict";

(async function () {
  const h = SNL.h, cfg = await SNL.config();
  const $ = (id) => document.getElementById(id);
  const last = location.pathname.split("/").pop();
  const uploading = last === "upload";
  const fast = new URLSearchParams(location.search).get("speed") === "fast";
  let A = null, board = null, chart = null, k = 0, timer = null, recordUrl = "", fileName = "";

  document.body.dataset.ready = "0";
  const MODES = { classic: "Classic", last_one_standing: "Last One Standing" };
  const pts = (v) => `${v >= 0 ? "+" : "−"}${Math.abs(100 * v).toFixed(1)} pts`;
  const places = (v) => `${v >= 0 ? "+" : "−"}${Math.abs(v).toFixed(2)} places`;

  // --- loading --------------------------------------------------------------
  async function fromServer(id) {
    const r = await fetch(`/api/games/${id}/analysis`);
    const data = await r.json();
    if (!r.ok) throw new Error(data.message || "the game could not be analysed");
    recordUrl = `/api/games/${id}/record`;
    fileName = `snl-game-${id}.json`;
    return data;
  }

  async function fromFile(file) {
    const cap = Number($("upload").dataset.maxBytes);
    if (file.size > cap) throw new Error(`the file holds ${file.size} bytes, over the limit of ${cap}`);
    const text = await file.text();
    const r = await fetch("/api/games/analysis", { method: "POST", headers: { "Content-Type": "application/json" }, body: text });
    let data;
    try { data = await r.json(); } catch (e) { data = { message: `the server refused the file (${r.status})` }; }
    if (!r.ok) throw new Error(data.message || "the file was refused");
    if (recordUrl.startsWith("blob:")) URL.revokeObjectURL(recordUrl);
    recordUrl = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    fileName = file.name || "game.json";
    return data;
  }

  // --- rendering ------------------------------------------------------------
  function render(data) {
    stop();
    A = data;
    A.colours = A.seats.map((s) => SNL.colourOf(s.colour, cfg.colours));
    A.labels = SNL.tokenLabels(A.seats);
    const classic = A.mode === "classic", n = A.turns_played;
    const winner = A.winner >= 0 ? A.seats[A.winner].name : "";
    const title = A.id ? `Game #${A.id}` : `Record ${fileName}`;
    document.title = `Snakes & Ladders — ${title}`;
    $("page-title").textContent = title;
    $("gp-winner").textContent = winner ? `${winner} wins` : A.over ? "Game over" : "Not finished";
    $("gp-facts").textContent = `${A.seats.map((s) => s.name).join(", ")} · ${MODES[A.mode] || A.mode} · ` +
      `${A.rules_name} rules · ${A.board.name} (${A.board.size} squares) · ${n} turns` + (A.stored ? "" : " · not stored");
    const v = A.verification, signed = v.signature === "signed by this server";
    const sigBad = v.signature === "signature does not match";
    $("verdict").textContent = !v.passed ? "✘ breaks the rules" : v.whole_game ? "✔ follows the rules" : "✔ follows the rules (unfinished)";
    $("verdict").className = `verdict ${v.passed ? "good" : "bad"}`;
    $("signature").textContent = signed ? "✔ signed by this server" : sigBad ? "✘ signature does not match" : v.signature;
    $("signature").className = `verdict ${signed ? "good" : sigBad ? "bad" : ""}`;
    $("verify-text").textContent = v.passed
      ? `Every one of the ${v.checked} rolled turns was replayed through the exact model's roll mechanics and holds` +
        (v.log_probability != null ? ` (log-probability of the game ${v.log_probability.toFixed(2)})` : "") +
        (v.whole_game ? "." : "; the record stops before the game is over.")
      : `The record breaks its own rules (${v.verdict}):`;
    $("verify-failures").replaceChildren(...v.failures.map((f) => h("li", {}, f)));
    $("signature-text").textContent = signed
      ? "Signature: this server signed this very record when it stored it (HMAC-SHA256 with its own key)."
      : sigBad ? "Signature: the record carries a signature, but not this server's signature of this record: it was changed, or signed elsewhere."
      : `Signature: ${v.signature}.`;
    $("download").href = recordUrl;
    $("download").setAttribute("download", fileName);
    $("gp-rules").replaceChildren(...[["Mode", MODES[A.mode] || A.mode], ["Board", `${A.board.name} (${A.board.size} squares)`],
      ...SNL.rulesSummary(cfg.rules_fields, A.rules)].map(([a, b]) => h("div", { class: "rule-row" }, h("dt", {}, a), h("dd", {}, b))));

    $("analysis").hidden = false;  // before the chart, which takes the width it is given
    board = new BoardView($("board"), A.board, cfg.colours);
    board.setSeats(A.seats);
    const slider = $("r-slider");
    slider.max = String(n);
    renderLuck(classic);
    renderAccuracy();
    renderChart(classic);
    $("loading").hidden = true;
    setTurn(uploading || !location.hash ? n : Number(location.hash.slice(1)) || 0);
    document.body.dataset.ready = "1";
  }

  function renderChart(classic) {
    const odds = A.odds;
    $("no-odds").hidden = odds.method === "exact";
    $("chart").hidden = odds.method !== "exact";
    $("seat-figure").textContent = odds.method !== "exact" ? "" : classic ? "chance to win" : "expected place";
    if (odds.method !== "exact") {
      $("no-odds").textContent = odds.reason;
      $("swings").replaceChildren();
      chart = null;
      return;
    }
    $("chart-title").textContent = classic ? "Each seat's chance of winning after every turn (exact)"
      : "Each seat's expected place after every turn (exact; 1st at the top)";
    chart = new OddsChart($("chart"), { values: classic ? odds.win : odds.expected_place, classic, colours: A.colours,
      names: A.seats.map((s) => s.name), swings: A.swings, onpick: (i) => { stop(); setTurn(i); } });
    $("swings").replaceChildren(...A.swings.map((s, j) => h("li", { "data-turn": s.turn },
      h("button", { type: "button", class: "swing-link", onclick: () => { stop(); setTurn(s.turn + 1); } },
        h("span", { class: "swing-no", style: `background:${A.colours[s.seat]}` }, j + 1), s.story))));
  }

  function renderLuck(classic) {
    const table = $("luck");
    if (A.odds.method !== "exact") { table.replaceChildren(); $("luck-note").textContent = "No exact odds, so no luck figure."; return; }
    const fmt = classic ? pts : (x) => places(-x);
    table.replaceChildren(h("tr", {}, h("th", {}, "player"), h("th", {}, "own dice"), h("th", {}, "others' turns")),
      ...A.luck.map((l) => h("tr", { "data-seat": l.seat }, h("td", {}, h("span", { class: "seat-dot mini", style: `background:${A.colours[l.seat]}` },
        A.labels[l.seat]), l.name), h("td", { class: l.own >= 0 === classic ? "up" : "down", "data-luck": l.own }, fmt(l.own)),
      h("td", {}, fmt(l.others)))));
    $("luck-note").textContent = classic
      ? "The change in each player's chance of winning over the turns they rolled, summed: the exact odds expect no change from a turn, so this is what the dice did."
      : "The places each player's expected finish gained over the turns they rolled, summed (the exact odds expect no change from a turn).";
  }

  function renderAccuracy() {  // under a choice rule: what each player's choices cost against the optimal policy
    const acc = A.accuracy || {};
    $("accuracy-card").hidden = !acc.seats && !acc.reason;
    if (!acc.seats) { $("accuracy").replaceChildren(); $("accuracy-note").textContent = acc.reason || ""; return; }
    const win = acc.unit === "win";  // a race of two: the chance of winning, in points; else expected turns
    const fmt = (x) => (x == null ? "—" : win ? (100 * x).toFixed(1) : x.toFixed(2));
    $("accuracy").replaceChildren(h("tr", {}, h("th", {}, "player"), h("th", {}, "choices"), h("th", {}, "best"),
      h("th", {}, win ? "points lost / choice" : "turns lost / choice"), h("th", {}, "in all")),
      ...acc.seats.map((a) => h("tr", { "data-seat": a.seat }, h("td", {}, h("span", { class: "seat-dot mini",
        style: `background:${A.colours[a.seat]}` }, A.labels[a.seat]), a.name), h("td", {}, a.choices), h("td", {}, a.best),
      h("td", { "data-accuracy": a.per_choice == null ? "" : a.per_choice }, fmt(a.per_choice)),
      h("td", {}, a.lost == null ? "never finishing risked" : fmt(a.lost)))));
    $("accuracy-note").textContent = "Each choice against the best one on offer: " +
      (win ? "the chance of winning it gave away, " : "the expected turns to the finish it added, ") +
      `measured with ${acc.note}. 0 is perfect play.`;
  }

  function renderSeats() {
    const st = A.states[k], odds = A.odds, classic = A.mode === "classic";
    const list = $("gp-seats");
    list.replaceChildren(...A.seats.map((s, i) => {
      const place = st.places.indexOf(i);
      let fig = null;
      if (odds.method === "exact") {
        const v = classic ? odds.win[k][i] : odds.expected_place[k][i];
        fig = classic ? h("div", { class: "odds" }, h("div", { class: "odds-bar" }, h("div", { class: "odds-fill", style: `width:${(100 * v).toFixed(2)}%;background:${A.colours[i]}` })),
          h("span", { class: "odds-text", "data-odds": v }, SNL.pct(v)))
          : h("div", { class: "odds" }, h("span", { class: "odds-text wide", "data-odds": v }, `expected place ${v.toFixed(2)}`));
      }
      const active = k < A.turns_played && A.turns[k].seat === i;
      return h("li", { class: `seat-card${active ? " active" : ""}${place >= 0 ? " done" : ""}`, "data-seat": i, style: `--seat:${A.colours[i]}` },
        h("span", { class: "seat-dot", style: `background:${A.colours[i]}` }, A.labels[i]),
        h("div", { class: "seat-main" }, h("div", { class: "seat-top" }, h("span", { class: "seat-name" }, s.name),
          place >= 0 ? h("span", { class: "badge place" }, SNL.ordinal(place + 1)) : null,
          h("span", { class: "seat-square", "data-square": st.positions[i] }, st.positions[i] === 0 ? "start" : `sq ${st.positions[i]}`)), fig));
    }));
  }

  // --- the replay -------------------------------------------------------------
  function setTurn(i) {
    if (!A) return;
    k = Math.max(0, Math.min(A.turns_played, i | 0));
    const st = A.states[k];
    board.setPositions(st.positions);
    board.setActive(k < A.turns_played ? A.turns[k].seat : -1);
    $("r-slider").value = String(k);
    const n = A.turns_played;
    $("r-label").textContent = k === 0 ? `The start · ${n} turns to replay` : `After turn ${k} of ${n} (${A.seats[A.turns[k - 1].seat].name})`;
    $("r-events").replaceChildren(...(k > 0 ? A.turns[k - 1].texts : ["Every token on the start."]).map((t) => h("li", {}, t)));
    for (const li of document.querySelectorAll("#swings li")) li.classList.toggle("on", Number(li.dataset.turn) + 1 === k);
    if (chart) chart.setTurn(k);
    renderSeats();
    $("r-prev").disabled = $("r-first").disabled = k === 0;
    $("r-next").disabled = $("r-last").disabled = k === n;
    document.body.dataset.turn = String(k);
    if (!uploading) history.replaceState(null, "", `#${k}`);
  }

  function stop() {
    if (timer) clearInterval(timer);
    timer = null;
    $("r-play").textContent = "▶";
    $("r-play").setAttribute("aria-label", "play");
    document.body.dataset.playing = "0";
  }
  function play() {
    if (timer) { stop(); return; }
    if (k >= A.turns_played) setTurn(0);
    $("r-play").textContent = "❚❚";
    $("r-play").setAttribute("aria-label", "pause");
    document.body.dataset.playing = "1";
    timer = setInterval(() => { if (k >= A.turns_played) stop(); else setTurn(k + 1); }, fast ? 60 : 650);
  }
  $("r-first").addEventListener("click", () => { stop(); setTurn(0); });
  $("r-prev").addEventListener("click", () => { stop(); setTurn(k - 1); });
  $("r-next").addEventListener("click", () => { stop(); setTurn(k + 1); });
  $("r-last").addEventListener("click", () => { stop(); setTurn(A.turns_played); });
  $("r-play").addEventListener("click", play);
  $("r-slider").addEventListener("input", (e) => { stop(); setTurn(Number(e.target.value)); });
  document.addEventListener("keydown", (e) => {
    if (!A || !$("notebook").hidden || e.altKey || e.ctrlKey || e.metaKey) return;
    const tag = e.target.tagName;
    if (tag === "INPUT" && e.target.type !== "range") return;
    if (tag === "INPUT" && e.key.startsWith("Arrow")) return;  // the slider moves itself
    const moves = { ArrowLeft: k - 1, ArrowRight: k + 1, ArrowDown: k - 1, ArrowUp: k + 1, Home: 0, End: A.turns_played };
    if (e.key in moves) { e.preventDefault(); stop(); setTurn(moves[e.key]); }
    else if (e.key === " " && tag !== "BUTTON") { e.preventDefault(); play(); }
  });

  // --- the notebook snippet -------------------------------------------------------
  function snippet() {
    const load = A.id
      ? [`# or straight from this server:`, `# import urllib.request`,
        `# text = urllib.request.urlopen("${location.origin}${recordUrl}").read().decode()`]
      : [];
    return [
      "import snlmarkov as snl",
      "from snlmarkov.plots import plot_odds",
      "",
      `text = open("${fileName}", encoding="utf-8").read()`,
      ...load,
      "record = snl.GameRecord.from_json(text)",
      "print(snl.verify_game(record))",
      "odds = snl.Odds(record.board, record.rules, players=len(record.seats), mode=record.mode)",
      "timeline = odds.timeline(record)",
      "swings = odds.swings(record, top=3, timeline=timeline)",
      "for s in swings:",
      "    print(s.story(record.mode))",
      "plot_odds(timeline, swings=swings)",
    ].join("\n");
  }
  $("notebook-btn").addEventListener("click", () => { $("notebook-code").textContent = snippet(); $("notebook").hidden = false; });
  $("notebook-close").addEventListener("click", () => { $("notebook").hidden = true; });
  $("notebook-copy").addEventListener("click", () => { if (navigator.clipboard) navigator.clipboard.writeText($("notebook-code").textContent); });

  // --- start ------------------------------------------------------------------------
  function fail(where, err) {
    $(where).textContent = err.message;
    $(where).hidden = false;
    $("loading").hidden = true;
    document.body.dataset.error = err.message;
    document.body.dataset.ready = "1";
  }
  if (uploading) {
    $("upload").hidden = false;
    $("loading").hidden = true;
    $("page-title").textContent = "Open a record file";
    $("upload-file").addEventListener("change", async (e) => {
      const file = e.target.files[0];
      if (!file) return;
      $("upload-error").hidden = true;
      delete document.body.dataset.error;
      $("upload-status").textContent = `Checking ${file.name}…`;
      document.body.dataset.ready = "0";
      try {
        const data = await fromFile(file);
        $("upload-status").textContent = `${file.name}: checked.`;
        render(data);
      } catch (err) {
        $("upload-status").textContent = "";
        $("analysis").hidden = true;
        fail("upload-error", new Error(`${file.name} was refused: ${err.message}`));
      }
    });
    document.body.dataset.ready = "1";
  } else {
    try { render(await fromServer(last)); } catch (err) { fail("load-error", err); }
  }
})();
