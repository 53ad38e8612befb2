// Shared helpers for the home page and the room page.
"use strict";

const SNL = {
  async config() {
    if (!SNL._config) SNL._config = fetch("/api/config").then((r) => r.json());
    return SNL._config;
  },

  h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v;
      else if (k === "style") node.style.cssText = v;  // through the CSSOM: allowed by a strict style-src
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (v === true) node.setAttribute(k, "");
      else if (v !== false && v != null) node.setAttribute(k, v);
    }
    for (const c of children.flat()) if (c != null) node.append(c.nodeType ? c : String(c));
    return node;
  },

  // labels for the rule fields the server lists (unknown fields get their own name)
  RULE_LABELS: {
    finish: ["Finish", { stay: "Exact finish: stay put", bounce: "Exact finish: bounce back", none: "No exact finish" }],
    bonus_on_six: ["Sixes roll again"],
    max_sixes: ["Sixes in a row at most"],
    on_cap: ["After the limit", { redeal: "Roll is redealt 1–5", forfeit: "A six forfeits the turn", restart: "A six sends you back to the start" }],
    start_on_six: ["Need a six to start"],
    bump: ["Landing on a token sends you back"],
    bump_to: ["…back to square"],
    faces: ["Die faces"],
    die: ["Die"],
    jump_after_bounce: ["Jumps act after a bounce"],
    choose_die: ["Choose the die before each roll, from"],
    choose_move: ["Roll several dice, move by the one you pick"],
  },

  // a form for the rules; returns {node, value(), set(rules)}
  rulesForm(fields, presets, initial) {
    const h = SNL.h, inputs = {};
    const grid = h("div", { class: "rules-grid" });
    for (const f of fields) {
      const [label, names] = SNL.RULE_LABELS[f.name] || [f.name.replace(/_/g, " ")];
      let input;
      if (f.kind === "bool") {
        input = h("input", { type: "checkbox", name: f.name, "data-rule": f.name });
        grid.append(h("label", { class: "rule rule-bool" }, input, h("span", { class: "switch" }), h("span", {}, label)));
      } else if (f.kind === "choice") {
        input = h("select", { name: f.name, "data-rule": f.name },
          f.choices.map((c) => h("option", { value: c }, (names && names[c]) || c)));
        grid.append(h("label", { class: "rule" }, h("span", {}, label), input));
      } else if (f.kind === "int_or_none") {
        input = h("select", { name: f.name, "data-rule": f.name },
          h("option", { value: "" }, f.none_label || "no limit"),
          Array.from({ length: f.max - f.min + 1 }, (_, i) => h("option", { value: f.min + i }, f.min + i)));
        grid.append(h("label", { class: "rule" }, h("span", {}, label), input));
      } else if (f.kind === "dice") {
        // a choice rule: tick two or more dice; the mover picks one of them before each roll
        const boxes = f.choices.map((c) => h("input", { type: "checkbox", name: `${f.name}-${c.spec}`,
          value: c.spec, "data-rule-die": f.name }));
        input = h("fieldset", { class: "rule rule-dice", "data-rule": f.name },
          h("legend", {}, label), ...f.choices.map((c, i) => h("label", { class: "die-tick" }, boxes[i], h("span", {}, c.label))));
        input.boxes = boxes;
        grid.append(input);
      } else if (f.kind === "int") {
        input = h("input", { type: "number", name: f.name, min: f.min, max: f.max, "data-rule": f.name });
        grid.append(h("label", { class: "rule" }, h("span", {}, label), input));
      } else if (f.kind === "die") {
        // a named die, or "Custom…" and a text form (2d6, spinner:15, faces:2,2,2,2,6,6, weights:1=1,6=4, cowries:4)
        const custom = h("input", { type: "text", name: `${f.name}-custom`, "data-rule-custom": f.name,
          maxlength: f.max_length, placeholder: "e.g. faces:1,1,2,3,5,8" });
        const customRow = h("label", { class: "rule rule-die-custom", hidden: true }, h("span", {}, "Custom die"), custom);
        const select = h("select", { name: f.name, "data-rule": f.name,
          onchange: () => { customRow.hidden = select.value !== "custom"; } },
          f.choices.map((c) => h("option", { value: c.spec }, c.label)), h("option", { value: "custom" }, "Custom…"));
        input = select;
        input.custom = custom;
        input.customRow = customRow;
        grid.append(h("label", { class: "rule" }, h("span", {}, label), select), customRow);
      } else {
        input = h("input", { type: "text", name: f.name, "data-rule": f.name, maxlength: 40 });
        grid.append(h("label", { class: "rule" }, h("span", {}, label), input));
      }
      inputs[f.name] = { f, input };
    }
    const set = (rules) => {
      for (const [name, { f, input }] of Object.entries(inputs)) {
        const v = name in rules ? rules[name] : f.default;
        if (f.kind === "bool") input.checked = !!v;
        else if (f.kind === "dice") { const on = new Set(v || []); for (const b of input.boxes) b.checked = on.has(b.value); }
        else if (f.kind === "die") {
          const spec = SNL.dieSpec(rules, f), named = f.choices.some((c) => c.spec === spec);
          input.value = named ? spec : "custom";
          input.custom.value = named ? "" : spec;
          input.customRow.hidden = named;
        }
        else if (f.kind === "int_or_none") input.value = v == null ? "" : String(v);
        else input.value = String(v);
      }
    };
    const value = () => {
      const out = {};
      for (const [name, { f, input }] of Object.entries(inputs)) {
        if (f.kind === "bool") out[name] = input.checked;
        else if (f.kind === "dice") out[name] = input.boxes.filter((b) => b.checked).map((b) => b.value);
        else if (f.kind === "die") out[name] = input.value === "custom" ? input.custom.value.trim() : input.value;
        else if (f.kind === "int_or_none") out[name] = input.value === "" ? null : Number(input.value);
        else if (f.kind === "int") out[name] = Number(input.value);
        else out[name] = input.value;
      }
      return out;
    };
    const presetRow = h("div", { class: "preset-row" }, h("span", { class: "muted" }, "Presets:"),
      Object.entries(presets).map(([name, rules]) =>
        h("button", { type: "button", class: "chip", "data-preset": name, onclick: () => set(rules) }, name)));
    set(initial || {});
    return { node: h("div", { class: "rules-form" }, presetRow, grid), value, set, inputs };
  },

  // the die of a rule set as its text form: rules.die, or a fair die written as faces, or the field's default
  dieSpec(rules, field) {
    if (rules && typeof rules.die === "string") return rules.die;
    if (rules && Number.isInteger(rules.faces)) return `d${rules.faces}`;
    return field ? field.default : "d6";
  },

  // the die of a rule set in words: its name in the house-rules form, or its text form
  dieLabel(rules, fields) {
    const field = (fields || []).find((f) => f.kind === "die");
    const spec = SNL.dieSpec(rules, field);
    const named = field && field.choices.find((c) => c.spec === spec);
    return named ? named.label : spec;
  },

  // the rules in words: [[label, value], ...] for every field (the pages' own labels)
  rulesSummary(fields, rules) {
    const named = new Set(fields.map((f) => f.name));
    const die = named.has("faces") || named.has("die") ? [] :  // the die, when the form has no field for it
      [["Die", rules.die ? String(rules.die) : `${rules.faces || 6} faces`]];
    const chosen = rules.choose_die && rules.choose_die.length;  // the die is then one of the dice chosen from
    return fields.filter((f) => !(chosen && f.kind === "die")).map((f) => {
      const [label, names] = SNL.RULE_LABELS[f.name] || [f.name.replace(/_/g, " ")];
      const v = f.name in rules ? rules[f.name] : f.default;
      const text = f.kind === "die" ? SNL.dieLabel(rules, fields) :
        f.kind === "dice" ? (v && v.length ? v.join(", ") : "no") :
        f.kind === "int_or_none" && v == null && f.none_label ? f.none_label :
        f.kind === "bool" ? (v ? "yes" : "no") : v == null ? "no limit" : (names && names[v]) || String(v);
      return [label, text];
    }).concat(die);
  },

  // a short token label for every seat, all different: initials ("Robot 1" -> "R1", "Ann" -> "A"),
  // then the first two letters, then the initial and the seat number
  tokenLabels(seats) {
    const initials = (name) => {
      const words = String(name || "?").trim().split(/\s+/).filter(Boolean);
      return (words.length > 1 ? words.slice(0, 2).map((w) => w[0]).join("") : (words[0] || "?")[0]).toUpperCase();
    };
    const out = seats.map((s) => initials(s.name));
    const clash = (i) => out.some((x, j) => j !== i && x === out[i]);
    const tries = [(s) => String(s.name || "?").replace(/\s+/g, "").slice(0, 2), (s, i) => initials(s.name)[0] + (i + 1)];
    for (const make of tries) {
      const bad = out.map((_, i) => clash(i));
      seats.forEach((s, i) => { if (bad[i]) { const t = make(s, i); out[i] = t[0].toUpperCase() + t.slice(1); } });
    }
    seats.forEach((s, i) => { if (clash(i)) out[i] = String(i + 1); });
    return out;
  },

  // a seat's colour as CSS: rooms keep hex colours, the library's records colour names (cfg.colours)
  colourOf(colour, colours) {
    if (/^#[0-9a-f]{3,6}$/i.test(colour)) return colour;
    const c = (colours || []).find((x) => x.name === String(colour).toLowerCase());
    return c ? c.hex : "#888888";
  },

  colourPicker(colours, selected, onpick) {
    const h = SNL.h;
    const row = h("div", { class: "swatches", role: "radiogroup" });
    const pick = (hex) => {
      for (const b of row.children) b.classList.toggle("on", b.dataset.hex === hex);
      row.dataset.value = hex;
      if (onpick) onpick(hex);
    };
    for (const c of colours) {
      row.append(h("button", { type: "button", class: "swatch", title: c.name, "aria-label": c.name,
        "data-hex": c.hex, style: `background:${c.hex}`, onclick: () => pick(c.hex) }));
    }
    pick(selected);
    return row;
  },

  toast(text, kind) {
    let box = document.getElementById("toasts");
    if (!box) { box = SNL.h("div", { id: "toasts" }); document.body.append(box); }
    const t = SNL.h("div", { class: `toast ${kind || ""}` }, text);
    box.append(t);
    setTimeout(() => t.remove(), 4000);
  },

  pct(p) {
    if (p >= 0.9995 && p < 1) return ">99.9%";
    if (p > 0 && p < 0.001) return "<0.1%";
    return (100 * p).toFixed(1) + "%";
  },

  ordinal(n) {
    const s = ["th", "st", "nd", "rd"], v = n % 100;
    return n + (s[(v - 20) % 10] || s[v] || s[0]);
  },

  secrets: {
    key: (room) => `snl:room:${room}`,
    load(room) {
      try { return JSON.parse(localStorage.getItem(SNL.secrets.key(room))) || {}; } catch (e) { return {}; }
    },
    save(room, value) { localStorage.setItem(SNL.secrets.key(room), JSON.stringify(value)); },
  },
};

window.SNL = SNL;
