// The room page: connects to the room's WebSocket, draws the board and the seats,
// animates every turn the server broadcasts, and asks to roll for the seats it holds.
"use strict";

(async function () {
  const h = SNL.h, cfg = await SNL.config();
  const roomId = decodeURIComponent(location.pathname.split("/").pop());
  const fast = new URLSearchParams(location.search).get("speed") === "fast";
  const T = fast ? { step: 15, jump: 60, die: 40, pause: 20 } : { step: 170, jump: 650, die: 450, pause: 250 };

  // secrets: saved by the home page, or carried by a personal link (#s=seat secret, #h=host secret)
  const stored = SNL.secrets.load(roomId);
  const frag = new URLSearchParams(location.hash.slice(1));
  if (frag.get("h")) stored.host = frag.get("h");
  if (frag.get("s")) stored.mine = frag.get("s");
  if (stored.seats && stored.seats.length && !stored.mine && !stored.localKind) stored.mine = stored.seats[0];
  SNL.secrets.save(roomId, stored);

  let st = null, you = { seat: -1, host: false }, lastSeq = 0, ws = null, board = null, boardKey = "";
  let greeting = false, queue = [], busy = false, deadline = 0, closedByUs = false, resultShown = false;
  // the connection: retries back off from 0.5 s, doubling to 10 s, with jitter; `lost` once it has dropped
  let online = false, lost = false, delay = 0, retryTimer = 0;

  const $ = (id) => document.getElementById(id);
  const dieEl = $("die"), rollBtn = $("roll");
  document.body.dataset.status = "connecting";
  // the coach (under a choice rule): on unless this browser turned it off
  const COACH_KEY = "snl:coach";
  let coachOn = localStorage.getItem(COACH_KEY) !== "off";

  // --- connection ---------------------------------------------------------
  function badge(text, kind) {
    $("conn").textContent = text;
    $("conn").className = `conn ${kind}`;
    document.body.dataset.conn = kind === "ok" ? "online" : text.startsWith("reconnecting") ? "reconnecting" : kind;
  }
  function connect() {
    retryTimer = 0;
    const proto = location.protocol === "https:" ? "wss" : "ws";
    ws = new WebSocket(`${proto}://${location.host}/ws/${encodeURIComponent(roomId)}`);
    ws.onopen = () => {
      const secret = stored.host || stored.mine;
      greeting = true;
      ws.send(JSON.stringify(secret ? { type: "hello", secret } : { type: "hello" }));
    };
    ws.onmessage = (ev) => {
      const m = JSON.parse(ev.data);
      m._recv = performance.now();
      if (m.type === "error") { onError(m); return; }
      if (m.type === "joined") {
        stored.mine = m.secret; SNL.secrets.save(roomId, stored); you.seat = m.seat; return;
      }
      if (m.type === "pong") return;
      if (m.type === "welcome") { online = true; delay = 0; badge("online", "ok"); }
      if (m.type === "rematch_ready") { location.href = m.url.replace("#", `${location.search}#`); return; }
      if (m.type === "you") { you = { seat: m.seat, host: m.host }; if (m.seat < 0 && !m.host) delete stored.mine;
        SNL.secrets.save(roomId, stored); queue.push({ type: "rerender" }); if (!busy) pump(); return; }
      queue.push(m);
      if (!busy) pump();
    };
    ws.onclose = (ev) => {
      online = false;
      if (closedByUs || ev.code === 4404) { roomGone(); return; }
      lost = true;
      delay = Math.min(10000, delay ? 2 * delay : 500);
      const wait = delay * (0.75 + 0.5 * Math.random());
      badge(`reconnecting… (next try in ${Math.ceil(wait / 1000)} s)`, "bad");
      renderControls();
      if (!retryTimer) retryTimer = setTimeout(connect, wait);
    };
  }

  function roomGone() {  // the server answers, but this room is not (or no longer) there: say so, stop trying
    closedByUs = true;
    online = false;
    badge("room closed", "bad");
    $("turn-name").textContent = "This room does not exist (or has closed).";
    $("gone").hidden = false;
    if (st) renderControls();
    document.body.dataset.status = "no_room";
    rollBtn.disabled = true;
    $("countdown").hidden = true;
  }

  function notice(text) {
    $("notice").textContent = text;
    $("notice").hidden = false;
    document.body.dataset.notice = text;
  }

  function onError(m) {
    if (greeting && m.code === "bad_secret") {  // a secret this room no longer knows: watch instead
      delete stored.mine; delete stored.host; SNL.secrets.save(roomId, stored);
      send({ type: "hello" });
      return;
    }
    if (m.code === "no_room") { roomGone(); return; }
    SNL.toast(m.message, "bad");
    if (st) renderControls();  // a refused roll or choice: its buttons come back
  }

  function send(msg) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(msg)); }

  // --- the message queue: one message at a time, animations included -------
  async function pump() {
    busy = true;
    renderControls();
    while (queue.length) {
      const m = queue.shift();
      try { await apply(m); } catch (e) { console.error(e); }
    }
    busy = false;
    renderControls();
  }

  async function apply(m) {
    if (m.type === "welcome") {
      greeting = false; lastSeq = m.seq; you = m.you; st = m; renderAll();
      const before = stored.server;  // the server this browser last saw the room on
      if (m.restored && before && before !== m.server) notice("The server restarted; your game is back where it was.");
      else if (lost) notice("The connection was lost and is back: your game goes on.");
      if (m.server !== before) { stored.server = m.server; SNL.secrets.save(roomId, stored); }
      showSaving(m.saving);
      return;
    }
    if (m.type === "rerender") { if (st) renderAll(); return; }
    if (m.seq !== lastSeq + 1) console.warn(`seq ${m.seq} after ${lastSeq}`);
    lastSeq = m.seq;
    document.body.dataset.seq = String(lastSeq);
    if (m.type === "room") {  // a finished game written late (a busy database) comes with its id and saving
      st = Object.assign(st || {}, m); renderAll(); showSaving(m.saving); if (resultShown) showStored(); return;
    }
    if (m.type === "odds") { st.odds = m.odds; renderSeats(); return; }
    if (m.type === "saving") { showSaving(m.saving); return; }
    if (m.type === "rematch") { showRematch(m); return; }
    if (m.type === "choice") {  // the turn waits for its mover's choice: the events so far, and what is asked
      await animateTurn(m);
      st.decision = m.decision;
      if (m.decision) { st.positions[m.seat] = m.decision.square; board.setPositions(st.positions); }
      deadline = m.remaining > 0 ? m._recv + 1000 * m.remaining : 0;
      showCoach(m.coach || []);
      renderSeats();
      return;
    }
    if (m.type === "turn") {
      await animateTurn(m);
      st.decision = null;
      showCoach(m.coach || []);
      Object.assign(st, { positions: m.positions, current: m.current, finished: m.finished, odds: m.odds,
        status: m.status, turn: m.turn + 1, round: m.round, remaining: m.remaining, game_id: m.game_id || 0 });
      deadline = m.remaining > 0 ? m._recv + 1000 * m.remaining : 0;
      showSaving(m.saving);
      board.setPositions(st.positions);
      renderSeats();
      if (st.status === "over") showResult();
    }
  }

  function showSaving(state) {  // the server writes every turn before telling it; it says when that is slow
    if (!online) return;
    if (state === "behind") badge("online · saving is behind…", "warn");
    else if (state === "failed") badge("online · the server could not save this game", "bad");
    else badge("online", "ok");
  }

  // --- animation ------------------------------------------------------------
  function showDie(v) {
    dieEl.dataset.value = String(v);
    dieEl.innerHTML = "";
    const pips = { 1: [5], 2: [1, 9], 3: [1, 5, 9], 4: [1, 3, 7, 9], 5: [1, 3, 5, 7, 9], 6: [1, 3, 4, 6, 7, 9] }[v];
    if (pips) for (let i = 1; i <= 9; i++) dieEl.append(h("span", { class: pips.includes(i) ? "pip" : "nopip" }));
    else dieEl.append(h("span", { class: "die-num" }, v));
  }
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  async function animateTurn(m) {
    const n = st.board.size, seat = m.seat;
    board.setActive(seat);
    let pendingBounce = false;
    for (const e of m.events) {
      addLog(e.text, seat, e.kind);
      if (e.kind === "choose_die") {
        $("die-label").textContent = e.spec;
      } else if (e.kind === "rolled_dice") {
        showThrown(e.values);
        await sleep(T.die);
      } else if (e.kind === "roll") {
        dieEl.classList.remove("tumble"); void dieEl.offsetWidth; dieEl.classList.add("tumble");
        showDie(e.value);
        await sleep(T.die);
      } else if (e.kind === "bounce") {
        pendingBounce = true;
      } else if (e.kind === "move") {
        if (pendingBounce) { await board.walk(seat, e.start, n, T.step); await board.walk(seat, n, e.end, T.step); }
        else await board.walk(seat, e.start, e.end, T.step);
        pendingBounce = false;
      } else if (e.kind === "ladder") {
        await sleep(T.pause); await board.slide(seat, e.end, T.jump);
      } else if (e.kind === "snake") {
        await sleep(T.pause); await board.slide(seat, e.end, T.jump * 1.3, board.snakePath(e.start, e.end).d);
      } else if (e.kind === "forfeit") {
        await board.slide(seat, e.back_to, T.jump);
      } else if (e.kind === "restart") {
        await board.slide(seat, 0, T.jump);
      } else if (e.kind === "bump") {
        await board.slide(seat, e.to_square, T.jump);
      } else if (e.kind === "finish") {
        SNL.toast(`${st.seats[seat].name} finishes ${SNL.ordinal(e.place)}!`, "good");
      }
    }
    await sleep(T.pause);
  }

  // --- choices and the coach ------------------------------------------------------
  function choiceKind() { return st.rules.choose_die ? "die" : st.rules.choose_move ? "move" : ""; }
  function showThrown(values) {  // the k dice thrown under choose_move, until the mover picks one
    $("die-label").textContent = `${values.length} dice: ${values.join(", ")}`;
  }
  function showCoach(lines) {
    for (const v of lines) {
      const text = (v.idle ? "(chosen by the server) " : "") + v.text;
      addLog(text, v.seat, "coach");
      $("coach").textContent = text;
      $("coach").className = `coach ${v.is_best ? "good" : "bad"}`;
      $("coach").dataset.cost = v.cost == null ? "inf" : String(v.cost);
      document.body.dataset.coach = String(Number(document.body.dataset.coach || 0) + 1);
    }
  }
  function applyCoachSetting() {
    $("coach-on").checked = coachOn;
    $("coach").hidden = !coachOn;
    document.body.classList.toggle("coach-off", !coachOn);
  }
  $("coach-on").addEventListener("change", () => {
    coachOn = $("coach-on").checked;
    localStorage.setItem(COACH_KEY, coachOn ? "on" : "off");
    applyCoachSetting();
  });
  applyCoachSetting();

  function renderChoices(myTurn) {
    // under choose_die: a button per die (it rolls that die); under choose_move: a button per value thrown
    const box = $("choices"), kind = choiceKind(), dec = st.decision;
    const buttons = [];
    if (kind === "die" && myTurn && (!dec || dec.kind === "die")) {
      st.rules.choose_die.forEach((spec, i) => buttons.push(h("button", { type: "button", class: "btn choice", "data-die": i,
        "aria-label": `Roll the ${spec} (key ${i + 1})`, onclick: () => pick({ die: i }) }, `Roll the ${spec}`)));
    } else if (kind === "move" && myTurn && dec && dec.kind === "move") {
      dec.options.forEach((v, i) => buttons.push(h("button", { type: "button", class: "btn choice", "data-value": v,
        "aria-label": `Move ${v} (key ${i + 1})`, onclick: () => pick({ value: v }) }, `Move ${v}`)));
    }
    box.replaceChildren(...buttons);
    box.hidden = !buttons.length;
    $("coach-box").hidden = !kind;
    if (buttons.length && !box.contains(document.activeElement)) buttons[0].focus({ preventScroll: true });
  }
  function pick(answer) {
    const seat = st.current;
    $("choices").querySelectorAll("button").forEach((b) => { b.disabled = true; });
    document.body.dataset.canChoose = "0";
    send({ type: st.decision ? "choose" : "roll", seat, secret: secretFor(seat), ...answer });
  }

  // --- rendering --------------------------------------------------------------
  function mySeats() {
    // seats this browser may roll for: every human seat of a local room it created, or its own seat online
    const out = new Set();
    if (!st) return out;
    if (st.kind === "local" && stored.seats) stored.seats.forEach((s, i) => { if (s) out.add(i); });
    else if (you.seat >= 0) out.add(you.seat);
    return out;
  }
  function secretFor(seat) {
    return st.kind === "local" ? stored.seats[seat] : stored.mine;
  }

  function renderAll() {
    const key = JSON.stringify(st.board);
    if (key !== boardKey) { board = new BoardView($("board"), st.board, cfg.colours); boardKey = key; board.setSeats(st.seats); }
    else if (!board.seats || board.seats.length !== st.seats.length ||
      board.seats.some((s, i) => s.colour !== st.seats[i].colour || s.name !== st.seats[i].name)) board.setSeats(st.seats);
    board.setPositions(st.positions);
    deadline = st.remaining > 0 ? (st._recv || performance.now()) + 1000 * st.remaining : 0;
    const kindText = st.kind === "online" ? "Online room" : st.seats.some((s) => s.ai) ? "Play with AI" : "Pass & Play";
    const choiceText = st.rules.choose_die ? ` · choose the die: ${st.rules.choose_die.join(" or ")}` :
      st.rules.choose_move ? ` · roll ${st.rules.choose_move}, move by one` : "";
    $("room-info").textContent = `${kindText} · ${st.mode === "classic" ? "Classic" : "Last One Standing"} · ${st.board.name.replace(/_/g, " ")}` +
      (st.rules.choose_die ? "" : ` · die: ${SNL.dieLabel(st.rules, cfg.rules_fields)}`) + choiceText;
    $("log").innerHTML = "";
    for (const t of st.log) addLog(t, -1, "");
    renderSeats();
    renderLobby();
    if (st.status === "over" || st.status === "abandoned") showResult();
  }

  function renderSeats() {
    const list = $("seat-cards"), mine = mySeats(), odds = st.odds || { win: [], method: "none" };
    list.innerHTML = "";
    $("odds-label").textContent = st.status === "lobby" || st.status === "starting" ? "" :
      odds.method === "pending" ? "working out the odds…" :
      odds.method === "none" ? "(no exact odds for these rules)" :
      odds.method === "busy" ? "(the server is busy: no odds for this game)" :
      odds.method === "exact" ? "exact chance to win" : "≈ chance to win";
    const labels = SNL.tokenLabels(st.seats);
    st.seats.forEach((s, i) => {
      const place = st.finished.indexOf(i);
      const p = odds.win.length ? odds.win[i] : null;
      const active = st.status === "playing" && st.current === i;
      const badges = [];
      if (s.ai) badges.push(h("span", { class: "badge", "data-strength": s.strength || "" },
        choiceKind() && s.strength ? `AI · ${s.strength}` : "AI"));
      if (mine.has(i) && st.kind === "online") badges.push(h("span", { class: "badge you" }, "you"));
      if (!s.ai && st.kind === "online" && !s.connected) badges.push(h("span", { class: "badge off" }, "offline"));
      if (place >= 0) badges.push(h("span", { class: "badge place" }, SNL.ordinal(place + 1)));
      const bar = p == null ? h("div", { class: "odds none" }, "—") :
        h("div", { class: "odds" }, h("div", { class: "odds-bar" },
          h("div", { class: "odds-fill", style: `width:${(100 * p).toFixed(2)}%;background:${s.colour}` })),
          h("span", { class: "odds-text", "data-odds": p }, (odds.method === "exact" ? "" : "≈") + SNL.pct(p)));
      list.append(h("li", { class: `seat-card${active ? " active" : ""}${place >= 0 ? " done" : ""}`, "data-seat": i,
        style: `--seat:${s.colour}` },
        h("span", { class: "seat-dot", style: `background:${s.colour}` }, labels[i]),
        h("div", { class: "seat-main" },
          h("div", { class: "seat-top" }, h("span", { class: "seat-name" }, s.name), ...badges,
            h("span", { class: "seat-square" }, st.positions[i] === 0 ? "start" : `sq ${st.positions[i]}`)),
          bar)));
    });
    board.setActive(st.status === "playing" ? st.current : -1);
    renderControls();
  }

  function renderControls() {
    if (!st) return;
    const mine = mySeats(), cur = st.current, seat = st.seats[cur], kind = choiceKind(), dec = st.decision;
    const myTurn = online && st.status === "playing" && !busy && queue.length === 0 && mine.has(cur) && seat && !seat.ai;
    const canRoll = myTurn && !dec && kind !== "die";
    rollBtn.disabled = !canRoll;
    rollBtn.hidden = kind === "die" || (kind === "move" && !!dec);
    renderChoices(myTurn);
    document.body.dataset.canChoose = myTurn && (kind === "die" || !!dec) ? "1" : "0";
    document.body.dataset.status = st.status;
    document.body.dataset.current = String(cur);
    document.body.dataset.canRoll = canRoll ? "1" : "0";
    const name = seat ? seat.name : "";
    if (closedByUs) document.body.dataset.status = "no_room";
    if (closedByUs) $("turn-name").textContent = "This room does not exist (or has closed).";
    else if (!online) $("turn-name").textContent = "The connection to the server is lost: reconnecting…";
    else if (st.status === "lobby" || st.status === "starting") $("turn-name").textContent = "Waiting in the lobby…";
    else if (st.status !== "playing") $("turn-name").textContent = st.status === "over" ? "Game over" : "Game abandoned";
    else if (seat.ai) $("turn-name").textContent = `${name} is thinking…`;
    else if (mine.has(cur)) $("turn-name").replaceChildren(h("b", { style: `color:${seat.colour}` }, name),
      kind === "die" ? ", your turn — pick the die to roll!" : dec ? ", pick the value to move by!" : ", your turn — roll!");
    else $("turn-name").textContent = dec ? `Waiting for ${name} to choose…` : `Waiting for ${name}…`;
    rollBtn.textContent = canRoll ? `Roll — ${name}` : "Roll";
    rollBtn.style.setProperty("--seat", seat ? seat.colour : "#888");
  }

  function addLog(text, seat, kind) {
    const li = h("li", { class: `log-${kind || "info"}` }, text);
    if (seat >= 0 && st.seats[seat]) li.style.borderLeftColor = st.seats[seat].colour;
    const log = $("log");
    log.prepend(li);
    while (log.children.length > 120) log.lastChild.remove();
  }

  // countdown bar
  setInterval(() => {
    const box = $("countdown");
    if (!st || !online || st.kind !== "online" || st.status !== "playing" || !deadline || busy) { box.hidden = true; return; }
    const left = Math.max(0, (deadline - performance.now()) / 1000);
    box.hidden = false;
    box.querySelector("span").textContent = `${Math.ceil(left)} s to ${st.decision ? "choose" : "roll"}`;
    box.querySelector(".countdown-bar").style.width = `${Math.min(100, (100 * left) / st.countdown)}%`;
  }, 100);

  // --- the lobby (online rooms) ------------------------------------------------
  let lobbyRules = null, lobbyColour = null;
  function renderLobby() {
    const lobby = $("lobby");
    const inLobby = st.kind === "online" && (st.status === "lobby" || st.status === "starting");
    lobby.hidden = !inLobby;
    if (!inLobby) return;
    const link = `${location.origin}/room/${roomId}`;
    $("share-link").value = link;
    if (stored.mine || stored.host) {
      $("my-link-note").hidden = false;
      $("my-link").href = `/room/${roomId}#${stored.host ? "h=" + stored.host : "s=" + stored.mine}`;
    }
    const ls = $("lobby-seats");
    ls.innerHTML = "";
    const labels = SNL.tokenLabels(st.seats);
    st.seats.forEach((s, i) => {
      const rm = you.host && i > 0 ? h("button", { type: "button", class: "chip", onclick: () =>
        send({ type: "remove_seat", secret: stored.host, seat: i }) }, "remove") : null;
      ls.append(h("li", { "data-seat": i }, h("span", { class: "seat-dot", style: `background:${s.colour}` }, labels[i]),
        h("span", { class: "seat-name" }, s.name), i === 0 ? h("span", { class: "badge" }, "host") : null,
        s.ai ? h("span", { class: "badge" }, "AI") : null, i === you.seat ? h("span", { class: "badge you" }, "you") : null,
        !s.ai && !s.connected ? h("span", { class: "badge off" }, "offline") : null, rm));
    });
    $("join").hidden = you.seat >= 0 || you.host || st.seats.length >= cfg.limits.seats;
    if (!$("join-colour").dataset.ready) {
      $("join-colour").dataset.ready = "1";
      const used = new Set(st.seats.map((s) => s.colour));
      lobbyColour = (cfg.colours.find((c) => !used.has(c.hex)) || cfg.colours[0]).hex;
      $("join-colour").append(SNL.colourPicker(cfg.colours, lobbyColour, (hex) => { lobbyColour = hex; }));
    }
    $("host-panel").hidden = !you.host;
    $("lobby-wait").hidden = you.host;
    $("lobby-rules").hidden = you.host;
    if (!you.host) renderTableRules();
    if (you.host) {
      if (!lobbyRules) {
        lobbyRules = SNL.rulesForm(cfg.rules_fields, cfg.presets, st.rules);
        $("lrules").append(lobbyRules.node);
        for (const name of Object.keys(cfg.boards)) $("lboard").append(h("option", { value: name }, name.replace(/_/g, " ")));
      }
      lobbyRules.set(st.rules);
      $("lboard").value = st.board.name;
      $("lcountdown").value = st.countdown;
      for (const r of document.querySelectorAll("input[name=lmode]")) r.checked = r.value === st.mode;
    }
  }
  function renderTableRules() {  // what the host picked, for everyone else
    const rows = [["Mode", st.mode === "classic" ? "Classic: first to the finish wins" : "Last One Standing: every place"],
      ["Board", `${st.board.name.replace(/_/g, " ")} (${st.board.size} squares)`], ["Countdown", `${st.countdown} s to roll`],
      ...SNL.rulesSummary(cfg.rules_fields, st.rules)];
    $("lobby-rules-list").replaceChildren(...rows.map(([k, v]) => h("div", { class: "rule-row" }, h("dt", {}, k), h("dd", {}, v))));
  }
  $("join-btn").addEventListener("click", () => send({ type: "join", name: $("join-name").value.trim(), colour: lobbyColour }));
  $("copy-link").addEventListener("click", () => { $("share-link").select(); navigator.clipboard && navigator.clipboard.writeText($("share-link").value); });
  function hostConfigure() {
    send({ type: "configure", secret: stored.host, rules: lobbyRules.value(), board: $("lboard").value,
      mode: document.querySelector("input[name=lmode]:checked").value, countdown: Number($("lcountdown").value) || 30 });
  }
  $("apply-rules").addEventListener("click", hostConfigure);
  $("start").addEventListener("click", () => { hostConfigure(); send({ type: "start", secret: stored.host }); });
  $("add-ai").addEventListener("click", () => {
    const used = new Set(st.seats.map((s) => s.colour));
    const c = (cfg.colours.find((x) => !used.has(x.hex)) || cfg.colours[0]).hex;
    let k = 1; while (st.seats.some((s) => s.name === `Robot ${k}`)) k++;
    send({ type: "add_ai", secret: stored.host, name: `Robot ${k}`, colour: c, strength: $("ai-strength").value });
  });

  // --- the result screen ---------------------------------------------------------
  function showResult() {
    if (resultShown) return;
    resultShown = true;
    const n = st.board.size, order = st.finished.slice();
    const rest = st.seats.map((_, i) => i).filter((i) => !order.includes(i))
      .sort((a, b) => st.positions[b] - st.positions[a] || a - b);
    const winner = order.length ? st.seats[order[0]] : null, labels = SNL.tokenLabels(st.seats);
    $("result-title").textContent = st.status === "abandoned" ? "Game abandoned" : winner ? `${winner.name} wins!` : "Game over";
    const list = $("result-order");
    list.innerHTML = "";
    order.forEach((i, k) => list.append(h("li", { class: "finished", "data-seat": i },
      h("span", { class: "place" }, SNL.ordinal(k + 1)), h("span", { class: "seat-dot", style: `background:${st.seats[i].colour}` }, labels[i]),
      h("span", { class: "seat-name" }, st.seats[i].name), h("span", { class: "muted" }, "finished"))));
    rest.forEach((i) => list.append(h("li", { class: "unfinished", "data-seat": i },
      h("span", { class: "place" }, "—"), h("span", { class: "seat-dot", style: `background:${st.seats[i].colour}` }, labels[i]),
      h("span", { class: "seat-name" }, st.seats[i].name), h("span", { class: "muted" }, `on square ${st.positions[i]} of ${n}`))));
    showStored();
    $("rematch").hidden = st.status !== "over" || !rematchSecret();
    $("result").hidden = false;
    document.body.dataset.result = "shown";
  }

  function showStored() {  // the game's number and page, once it is stored
    $("result-note").textContent = `${st.turn} turns played.` + (st.game_id ? ` Stored as game #${st.game_id}.` : "");
    $("see-analysis").hidden = !st.game_id;
    $("see-analysis").href = `/games/${st.game_id}`;
  }

  // --- rematch: a new room with the same seats, rules and board (online: every seat asks) ----------
  function rematchSecret() {
    if (st.kind === "local") return mySeats().size ? stored.host || "" : "";
    return you.seat >= 0 ? stored.host || stored.mine || "" : "";
  }
  function showRematch(m) {
    const note = $("rematch-note");
    if (m.waiting.length) {
      note.textContent = `Rematch: ${m.accepted.map((i) => st.seats[i].name).join(", ")} ready; waiting for ` +
        m.waiting.map((i) => st.seats[i].name).join(", ") + ".";
    } else note.textContent = "The rematch has started.";
    note.hidden = false;
    document.body.dataset.rematch = m.waiting.length ? "waiting" : "started";
    if (m.room && !rematchSecret()) { $("watch-rematch").hidden = false; $("watch-rematch").href = `/room/${m.room}${location.search}`; }
  }
  $("rematch").addEventListener("click", async () => {
    $("rematch").disabled = true;
    const r = await fetch(`/api/rooms/${encodeURIComponent(roomId)}/rematch`, { method: "POST",
      headers: { "Content-Type": "application/json" }, body: JSON.stringify({ secret: rematchSecret() }) });
    const data = await r.json();
    if (!r.ok) { SNL.toast(data.message || "no rematch", "bad"); $("rematch").disabled = false; return; }
    if (st.kind === "local") {
      SNL.secrets.save(data.room, { host: data.host, seats: data.seats });
      location.href = `${data.url}${location.search}`;
    } else if (data.url) location.href = data.url.replace("#", `${location.search}#`);
    else $("rematch").textContent = "Waiting for the others…";
  });
  $("see-board").addEventListener("click", () => { $("result").hidden = true; });

  rollBtn.addEventListener("click", () => {
    if (rollBtn.disabled) return;
    rollBtn.disabled = true;
    document.body.dataset.canRoll = "0";
    send({ type: "roll", seat: st.current, secret: secretFor(st.current) });
  });
  document.addEventListener("keydown", (e) => {
    const typing = ["INPUT", "SELECT", "TEXTAREA"].includes(document.activeElement.tagName);
    if ((e.key === " " || e.key === "Enter") && !rollBtn.disabled && !rollBtn.hidden && !typing) {
      e.preventDefault(); rollBtn.click();
      return;
    }
    const choices = $("choices").querySelectorAll("button:not(:disabled)");  // keys 1..9 pick a choice
    if (!typing && !$("choices").hidden && /^[1-9]$/.test(e.key) && choices[Number(e.key) - 1]) {
      e.preventDefault(); choices[Number(e.key) - 1].click();
    }
  });
  showDie(1);
  connect();
})();
