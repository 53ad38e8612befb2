// The home page: pick a mode, name each seat and choose its colour, pick the rules, start.
"use strict";

(async function () {
  const h = SNL.h, cfg = await SNL.config();
  const setup = document.getElementById("setup"), seatsBox = document.getElementById("seats");
  const LIMITS = { ai: [2, 6], pass: [2, 6], online: [1, 1] };
  let mode = null, seats = [], rulesForm = null;

  const boardSel = document.getElementById("board");
  for (const name of Object.keys(cfg.boards)) {
    const b = cfg.boards[name];
    boardSel.append(h("option", { value: name }, `${name.replace(/_/g, " ")} (${b.size} squares)`));
  }
  rulesForm = SNL.rulesForm(cfg.rules_fields, cfg.presets, {});
  document.getElementById("rules").append(rulesForm.node);

  const defaultName = (i) => (mode === "ai" && i > 0 ? `Robot ${i}` : mode === "online" ? "Host" : `Player ${i + 1}`);
  function freeColour() {
    const used = new Set(seats.map((s) => s.colour));
    return (cfg.colours.find((c) => !used.has(c.hex)) || cfg.colours[0]).hex;
  }
  function addSeat() {
    const i = seats.length;
    seats.push({ name: defaultName(i), colour: freeColour(), ai: mode === "ai" && i > 0, strength: "optimal" });
  }
  function render() {
    seatsBox.innerHTML = "";
    seats.forEach((seat, i) => {
      const name = h("input", { type: "text", class: "seat-name", value: seat.name, maxlength: cfg.limits.name,
        "aria-label": `Seat ${i + 1} name`, "data-seat": i, oninput: (e) => { seat.name = e.target.value; } });
      const token = h("span", { class: "seat-token", style: `background:${seat.colour}` });
      const picker = SNL.colourPicker(cfg.colours, seat.colour, (hex) => {
        seat.colour = hex; token.style.background = hex;
      });
      // an AI seat's strength: how it chooses under a choice rule (choose the die, choose the move)
      const strength = seat.ai ? h("select", { class: "seat-strength", "aria-label": `Seat ${i + 1} strength`,
        title: "How this AI seat chooses under a choice rule", "data-seat": i,
        onchange: (e) => { seat.strength = e.target.value; } },
        ["optimal", "greedy", "random"].map((v) => h("option", { value: v, selected: v === seat.strength }, v))) : null;
      seatsBox.append(h("div", { class: "seat-row", "data-seat": i }, token,
        h("span", { class: "seat-no" }, seat.ai ? "AI" : `#${i + 1}`), name, strength, picker));
    });
    const [lo, hi] = LIMITS[mode];
    document.getElementById("add-seat").hidden = mode === "online";
    document.getElementById("remove-seat").hidden = mode === "online";
    document.getElementById("add-seat").disabled = seats.length >= hi;
    document.getElementById("remove-seat").disabled = seats.length <= lo;
  }
  function choose(m) {
    mode = m;
    for (const b of document.querySelectorAll(".mode-card")) b.classList.toggle("on", b.dataset.mode === m);
    seats = [];
    const n = m === "online" ? 1 : 2;
    for (let i = 0; i < n; i++) addSeat();
    document.getElementById("setup-title").textContent =
      m === "online" ? "You (the host)" : m === "ai" ? "You and your AI opponents" : "Players";
    document.getElementById("game-options").hidden = m === "online";
    document.getElementById("online-note").hidden = m !== "online";
    document.getElementById("start").textContent = m === "online" ? "Create Room" : "Start Game";
    setup.hidden = false;
    document.getElementById("how").hidden = true;
    render();
    setup.scrollIntoView({ behavior: "smooth", block: "start" });
  }
  for (const b of document.querySelectorAll(".mode-card")) b.addEventListener("click", () => choose(b.dataset.mode));
  document.getElementById("add-seat").addEventListener("click", () => { addSeat(); render(); });
  document.getElementById("remove-seat").addEventListener("click", () => { seats.pop(); render(); });

  document.getElementById("start").addEventListener("click", async () => {
    const body = {
      kind: mode === "online" ? "online" : "local",
      seats: seats.map((s) => (s.ai ? { name: s.name.trim(), colour: s.colour, ai: true, strength: s.strength }
        : { name: s.name.trim(), colour: s.colour, ai: false })),
    };
    if (mode !== "online") {
      body.mode = document.querySelector("input[name=mode]:checked").value;
      body.board = boardSel.value;
      body.rules = rulesForm.value();
    }
    const r = await fetch("/api/rooms", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body) });
    const data = await r.json();
    if (!r.ok) { SNL.toast(data.message || "could not create the room", "bad"); return; }
    SNL.secrets.save(data.room, { host: data.host, seats: data.seats });
    const q = location.search || "";
    location.href = `${data.url}${q}`;
  });
  const pre = new URLSearchParams(location.search).get("mode");
  if (pre && LIMITS[pre]) choose(pre);
  document.body.dataset.ready = "1"; // the buttons answer from here on (the config is fetched first)
})();
