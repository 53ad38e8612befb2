// The archive page (/games): the stored games, newest first, a page at a time, filtered.
// The filters live in the address (?mode=&rules=&player=&status=&page=), so a view can be shared.
"use strict";

(async function () {
  const h = SNL.h, cfg = await SNL.config();
  const $ = (id) => document.getElementById(id);
  const FIELDS = ["mode", "rules", "player", "status"];
  for (const name of Object.keys(cfg.presets)) $("f-rules").append(h("option", { value: name }, name));
  $("f-rules").append(h("option", { value: "custom" }, "custom"));

  let query = new URLSearchParams(location.search);
  for (const f of FIELDS) $(`f-${f}`).value = query.get(f) || "";

  const MODES = { classic: "Classic", last_one_standing: "Last One Standing" };

  function row(g) {
    const labels = SNL.tokenLabels(g.players.map((name) => ({ name })));
    const players = g.players.map((name, i) => h("span", { class: `gl-player${name === g.winner ? " won" : ""}` },
      h("span", { class: "seat-dot mini", style: `background:${SNL.colourOf(g.colours[i], cfg.colours)}` }, labels[i]), name));
    const when = new Date(1000 * g.finished_at);
    return h("li", { "data-game": g.id },
      h("a", { class: "game-row", href: `/games/${g.id}` },
        h("span", { class: "gl-id" }, `#${g.id}`),
        h("span", { class: "gl-players" }, players),
        h("span", { class: "gl-winner" }, g.winner ? `★ ${g.winner}` : h("span", { class: "badge off" }, "not finished")),
        h("span", { class: "gl-facts muted" }, `${MODES[g.mode] || g.mode} · ${g.rules} rules · ${g.board} · ${g.turns} turns`),
        h("time", { class: "gl-date muted", datetime: when.toISOString() }, when.toLocaleString())));
  }

  async function load() {
    document.body.dataset.ready = "0";
    const r = await fetch(`/api/games?${query}`);
    const data = await r.json();
    const list = $("games");
    list.replaceChildren();
    if (!r.ok) {
      $("games-summary").textContent = data.message || "the archive could not be read";
      document.body.dataset.ready = "1";
      return;
    }
    if (!data.stored) $("games-summary").textContent = "This server keeps no games (start it with snlmarkov serve --db FILE).";
    else if (!data.total) $("games-summary").textContent = "No stored game matches.";
    else $("games-summary").textContent = `${data.total} game${data.total === 1 ? "" : "s"}, newest first.`;
    for (const g of data.games) list.append(row(g));
    $("page-info").textContent = `page ${data.page} of ${data.pages}`;
    $("prev").disabled = data.page <= 1;
    $("next").disabled = data.page >= data.pages;
    document.body.dataset.page = String(data.page);
    document.body.dataset.ready = "1";
  }

  function go(page) {
    const next = new URLSearchParams();
    for (const f of FIELDS) { const v = $(`f-${f}`).value.trim(); if (v) next.set(f, v); }
    if (page > 1) next.set("page", String(page));
    query = next;
    history.replaceState(null, "", `/games${next.toString() ? "?" + next : ""}`);
    load();
  }
  $("filters").addEventListener("submit", (e) => { e.preventDefault(); go(1); });
  for (const f of ["mode", "rules", "status"]) $(`f-${f}`).addEventListener("change", () => go(1));
  $("prev").addEventListener("click", () => go(Number(query.get("page") || 1) - 1));
  $("next").addEventListener("click", () => go(Number(query.get("page") || 1) + 1));
  load();
})();
