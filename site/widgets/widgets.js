/* The chapter's notebook widgets in the browser, with no Python kernel (issue 46).
 *
 * tools/chapter.py puts, where a notebook's ipywidgets output was, a placeholder
 *   <div class="chapter-widget" data-widget="NAME"></div> and <script src=".../widgets.js">
 * with NAME "split" (notebook 1), "alignment" (notebook 5) or "head-lab" (notebook 9). This
 * script fills every placeholder of the page, once, however often it is included, and loads
 * the other files of its folder (written by tools/widgets.py) as classic scripts, since a
 * page opened from disk may not fetch(): data.js with the page, runtime.js (ONNX Runtime
 * Web) and a model when the reader first asks a widget to compute.
 *
 * What it holds: drawing (SVG heatmaps and a colour bar), lookup (the lines notebook 1
 * printed, the vocabularies), Python's input messages (templates from data.js, filled with
 * Python's repr), and the greedy decoding loop (one argmax per step).
 * What it must not hold: attention, softmax, normalisation or any layer of a model. Every
 * number a map shows is an output of an ONNX model exported from d2lutil.
 *
 * For tests, each widget root carries data-status ("idle", "loading", "done", "error") and
 * data-runs (counts every answer shown: a map drawn or a message); each heatmap cell is a
 * <rect> whose data-value is the model's float32 value as String() prints it.
 */
(function () {
  "use strict";
  if (self.chapterWidgets) {  // included again, for a later placeholder
    self.chapterWidgets.mountAll();
    return;
  }
  const here = document.currentScript.src;
  const BASE = here.slice(0, here.lastIndexOf("/") + 1);  // the widgets/ folder
  const assets = (self.chapterWidgetAssets = self.chapterWidgetAssets || {});
  const SVG = "http://www.w3.org/2000/svg";
  let counter = 0;  // for ids unique on the page

  // --- the files of the folder -------------------------------------------------------------

  const loading = {};
  /** The value that BASE + name + ".js" files under `name`, loaded once by a <script>. */
  function asset(name) {
    if (!loading[name]) {
      loading[name] = name in assets ? Promise.resolve(assets[name]) : new Promise((ok, fail) => {
        const script = document.createElement("script");
        script.src = BASE + name + ".js";
        script.onload = () => name in assets ? ok(assets[name])
          : fail(new Error(`${name}.js holds no ${name}`));
        script.onerror = () => fail(new Error(`cannot load ${script.src}`));
        document.head.appendChild(script);
      });
      loading[name].catch(() => delete loading[name]);  // a later click tries again
    }
    return loading[name];
  }

  /** The bytes of base64 text of gzipped bytes. */
  async function unpack(text) {
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  let runtime = null;
  /** ONNX Runtime Web: its ES module imported from a Blob URL (file:// allows no other
   * import), on one thread, with its WebAssembly binary given, not fetched. */
  function ort() {
    runtime = runtime || (async () => {
      const packed = await asset("runtime");
      const [module, wasm] = await Promise.all([unpack(packed.module), unpack(packed.wasm)]);
      const url = URL.createObjectURL(new Blob([module], {type: "text/javascript"}));
      const lib = await import(url);
      URL.revokeObjectURL(url);
      lib.env.wasm.wasmBinary = wasm;
      lib.env.wasm.numThreads = 1;
      lib.env.wasm.proxy = false;
      return lib;
    })();
    runtime.catch(() => { runtime = null; });
    return runtime;
  }

  const sessions = {};
  /** The inference session of model asset `name`, made once. */
  function session(name) {
    if (!sessions[name]) {
      sessions[name] = Promise.all([ort(), asset(name).then(unpack)])
        .then(([lib, bytes]) => lib.InferenceSession.create(bytes,
                                                            {executionProviders: ["wasm"]}));
      sessions[name].catch(() => delete sessions[name]);
    }
    return sessions[name];
  }

  // --- Python's words ----------------------------------------------------------------------

  const hidden = /[\p{C}\p{Z}]/u;  // what Python's str.isprintable refuses (but " ")
  const hex = (c, n) => c.toString(16).padStart(n, "0");
  /** Python's repr of a str. */
  function repr(s) {
    const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
    let out = quote;
    for (const ch of s) {
      const c = ch.codePointAt(0);
      if (ch === quote || ch === "\\") out += "\\" + ch;
      else if (ch === "\t") out += "\\t";
      else if (ch === "\n") out += "\\n";
      else if (ch === "\r") out += "\\r";
      else if (ch !== " " && hidden.test(ch)) {
        out += c < 0x100 ? "\\x" + hex(c, 2) : c < 0x10000 ? "\\u" + hex(c, 4) : "\\U" + hex(c, 8);
      } else out += ch;
    }
    return out + quote;
  }

  /** A data.js message template with {word} (and {bad}) filled in as Python prints them. */
  function message(template, word, bad) {
    return template.replace("{word}", () => repr(word))
      .replace("{bad}", () => "[" + (bad || []).map(repr).join(", ") + "]");
  }

  // --- drawing -----------------------------------------------------------------------------

  function el(tag, attributes, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attributes || {})) e.setAttribute(k, v);
    e.append(...children);
    return e;
  }

  function svg(tag, attributes, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attributes || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /** The colour of value v on the maps' scale (vmin 0, vmax 1), picked as matplotlib
   * picks it from a colour map of 256 entries: entry floor(256 v), the last for v = 1. */
  function colour(colours, v) {
    return colours[Math.min(255, Math.max(0, Math.floor(v * 256)))];
  }

  const CELL = 20, FONT = 12;
  /** One heatmap: rows x cols cells, value(r, c) each; a <rect> per cell with its value. */
  function heatmap(colours, {rows, cols, value, title, xlabel, ylabel, label}) {
    const left = 18 + 7.5 * Math.max(...rows.map(r => r.length)) + 6;
    const top = title ? 24 : 6;
    const width = left + CELL * cols.length + 8, height = top + CELL * rows.length + 36;
    const map = svg("svg", {class: "cw-map", role: "img", "aria-label": label,
                            viewBox: `0 0 ${width} ${height}`, width, height});
    if (title) {
      map.append(svg("text", {x: left + CELL * cols.length / 2, y: 16, "text-anchor": "middle",
                              class: "cw-title"}, title));
    }
    rows.forEach((row, r) => {
      map.append(svg("text", {x: left - 4, y: top + CELL * (r + 0.5), "text-anchor": "end",
                              "dominant-baseline": "central"}, row));
      cols.forEach((col, c) => {
        const v = value(r, c);
        const cell = svg("rect", {x: left + CELL * c, y: top + CELL * r, width: CELL,
                                  height: CELL, fill: colour(colours, v),
                                  "data-value": String(v)});
        cell.append(svg("title", {}, `${row} \u2192 ${col}: ${v.toFixed(2)}`));
        map.append(cell);
      });
    });
    cols.forEach((col, c) => map.append(svg("text", {
      x: left + CELL * (c + 0.5), y: top + CELL * rows.length + 14, "text-anchor": "middle"},
    col)));
    map.append(svg("text", {x: left + CELL * cols.length / 2, y: height - 4,
                            "text-anchor": "middle"}, xlabel));
    const middle = top + CELL * rows.length / 2;
    map.append(svg("text", {x: 12, y: middle, "text-anchor": "middle",
                            transform: `rotate(-90 12 ${middle})`}, ylabel));
    map.setAttribute("font-size", FONT);
    return map;
  }

  /** The colour bar of the scale 0 to 1. */
  function colourBar(colours, label) {
    const id = `chapter-widget-scale-${++counter}`, top = 10, bar = 140;
    const scale = svg("svg", {
      class: "cw-scale", role: "img", width: 74, height: bar + 2 * top,
      viewBox: `0 0 74 ${bar + 2 * top}`, "font-size": FONT,
      "aria-label": `colour scale: ${label} from 0 (palest) to 1 (darkest)`});
    const gradient = svg("linearGradient", {id, x1: 0, y1: 1, x2: 0, y2: 0});
    for (let i = 0; i < 256; i += 15) {
      gradient.append(svg("stop", {offset: i / 255, "stop-color": colours[i]}));
    }
    scale.append(svg("defs"), svg("rect", {x: 4, y: top, width: 14, height: bar,
                                          fill: `url(#${id})`, stroke: "#555"}));
    scale.firstChild.append(gradient);
    for (const t of [0, 0.2, 0.4, 0.6, 0.8, 1]) {
      const y = top + bar * (1 - t);
      scale.append(svg("line", {x1: 18, x2: 22, y1: y, y2: y, stroke: "#333"}),
                   svg("text", {x: 24, y, "dominant-baseline": "central"}, t.toFixed(1)));
    }
    const middle = top + bar / 2;
    scale.append(svg("text", {x: 66, y: middle, "text-anchor": "middle",
                              transform: `rotate(-90 66 ${middle})`}, label));
    return scale;
  }

  // --- one widget --------------------------------------------------------------------------

  /** What every widget shares: its root's state, an output line read aloud, a maps area,
   * and its answers, shown one after the other in the order they were asked. */
  function frame(root) {
    const text = el("output", {class: "cw-text", "aria-live": "polite"});
    const maps = el("div", {class: "cw-maps"});
    let runs = 0, pending = 0, queue = Promise.resolve();
    // Keys typed into a widget on a slide are the widget's, not reveal.js's shortcuts.
    if (root.closest(".reveal")) {
      for (const type of ["keydown", "keypress", "keyup"]) {
        root.addEventListener(type, e => e.stopPropagation());
      }
    }
    const show = (line, drawn, status) => {
      text.textContent = line;
      maps.replaceChildren(...drawn);
      fitSlide(root, maps);
      root.dataset.runs = String(++runs);
      root.dataset.status = --pending ? "loading" : status;
    };
    return {
      text, maps,
      /** Show what `task` (maybe async) returns, [line, maps drawn], after every answer
       * asked before it. */
      answer(task) {
        pending++;
        root.dataset.status = "loading";
        queue = queue.then(task).then(([line, drawn = []]) => show(line, drawn, "done"), error =>
          show(`The widget could not run here: ${error.message || error}`, [], "error"));
      },
    };
  }

  /** In a reveal.js deck (its Reveal on the page), the maps are drawn as large as the
   * slide lets them, up to 2.5 times their size: in one row, within the height the slide
   * leaves below them; then the slide is laid out again (centred, or from its top). */
  function fitSlide(root, maps) {
    const slide = root.closest(".reveal .slides section"), deck = self.Reveal;
    if (!slide || !deck || !deck.layout) return;
    const drawn = Array.from(maps.children);
    const size = e => ["width", "height"].map(a => Number(e.getAttribute(a)));
    drawn.forEach(e => { e.style.width = e.style.height = ""; });
    deck.layout();  // where the slide starts, once it holds the maps
    if (!drawn.length) return;
    const box = slide.closest(".slides").getBoundingClientRect();
    const scale = box.height / deck.getConfig().height * (Number(slide.style.zoom) || 1);
    const room = (box.bottom - maps.getBoundingClientRect().top) / scale - 12;
    const gap = parseFloat(getComputedStyle(maps).columnGap) || 0;
    const across = maps.clientWidth - gap * (drawn.length - 1) - 1;
    const factor = Math.min(2.5, room / Math.max(...drawn.map(e => size(e)[1])),
                            across / drawn.reduce((sum, e) => sum + size(e)[0], 0));
    drawn.forEach(e => {
      const [width, height] = size(e);
      e.style.width = `${width * factor}px`;
      e.style.height = `${height * factor}px`;
    });
    deck.layout();
  }

  /** Enter in a text box presses the widget's button. */
  function enterPresses(input, button) {
    input.addEventListener("keydown", e => {
      if (e.key === "Enter") { e.preventDefault(); button.click(); }
    });
  }

  const textBox = value => el("input", {type: "text", value, spellcheck: "false",
                                        autocomplete: "off", autocapitalize: "none"});

  // Notebook 1: the slider over a head's split, and what show_split printed at each stop.
  function split(root, data) {
    const {label, min, max, step, value, lines} = data.split;
    const f = frame(root);
    const slider = el("input", {type: "range", min, max, step, value});
    const readout = el("output", {"aria-hidden": "true"}, Number(value).toFixed(2));
    const update = () => {
      const key = Number(slider.value).toFixed(2);
      readout.textContent = key;
      f.answer(() => [lines[key] === undefined ? `no line stored for ${key}` : lines[key]]);
    };
    slider.addEventListener("input", update);
    root.append(el("div", {class: "cw-controls"}, el("label", {}, label + " ", slider), readout),
                f.text);
    update();
  }

  // Notebook 5: the map of two words, drawn when the button is pressed.
  function alignment(root, data) {
    const d = data.alignment;
    const f = frame(root);
    const boxes = d.value.map(textBox);
    const button = el("button", {type: "button"}, "Draw the map");
    boxes.forEach(box => enterPresses(box, button));
    /** Python's alignment._check_word: the word lower-cased, or its message. */
    const check = (word, empty, letters) => {
      if (word === "") return {error: message(empty, word)};
      const lowered = word.toLowerCase();
      const bad = [...new Set(Array.from(lowered).filter(ch => !d.alphabet.includes(ch)))]
        .sort((a, b) => a.codePointAt(0) - b.codePointAt(0));
      return bad.length ? {error: message(letters, word, bad)} : {word: lowered};
    };
    button.addEventListener("click", () => {
      const [query, key] = boxes.map(b => b.value);
      const q = check(query, d.empty, d.letters);
      const k = q.error ? q : check(key, d.key_empty, d.key_letters);
      if (k.error) {
        f.answer(() => [k.error]);
        return;
      }
      f.answer(async () => {
        const s = await session("alignment");
        const lib = await ort();
        const numbers = w => new lib.Tensor("int64", BigInt64Array.from(
          Array.from(w, ch => BigInt(d.alphabet.indexOf(ch)))), [w.length]);
        const out = await s.run({query: numbers(q.word), key: numbers(k.word)});
        const w = out.weights.data, n = k.word.length;
        const map = heatmap(data.colours, {
          rows: Array.from(q.word), cols: Array.from(k.word), value: (r, c) => w[r * n + c],
          xlabel: "Keys", ylabel: "Queries",
          label: `attention weights of the letters of ${q.word} (rows) over the letters of `
            + `${k.word} (columns), on a scale from 0 to 1`});
        return [`rows: the letters of ${q.word}; columns: the letters of ${k.word}`,
                [map, colourBar(data.colours, "attention weight")]];
      });
    });
    root.append(el("div", {class: "cw-controls"},
                   ...boxes.map((box, i) => el("label", {}, d.names[i] + " ", box)), button),
                f.text, f.maps);
  }

  // Notebook 9: the head lab. A shipped translator pronounces a word, heads switched off.
  function headLab(root, data) {
    const d = data["head-lab"];
    const f = frame(root);
    const word = textBox(d.value);
    const seed = el("select", {}, ...d.seeds.map(s => el("option", {value: s}, String(s))));
    const heads = Array.from({length: d.num_heads}, () => el("input", {type: "checkbox"}));
    heads.forEach(h => { h.checked = true; });
    const values = el("input", {type: "checkbox"});
    const button = el("button", {type: "button"}, "Pronounce");
    enterPresses(word, button);

    /** Greedy decoding as d2lutil.translator.greedy_decode and pronounce do it, without a
     * cache: each step runs the model on every token so far and appends the argmax of the
     * last row's scores, until <eos> or max_target_len steps. */
    async function pronounce(text, model, off) {
      const s = await session(`translator-seed-${model}`);
      const lib = await ort();
      const ids = Array.from(text, ch => BigInt(d.letters[ch]));
      const mask = Float32Array.from({length: d.num_heads}, (_, h) => off.includes(h) ? 0 : 1);
      const fixed = {
        source: new lib.Tensor("int64", BigInt64Array.from(ids), [1, ids.length]),
        source_valid_lens: new lib.Tensor("int64", BigInt64Array.from([BigInt(ids.length)]), [1]),
        head_mask: new lib.Tensor("float32", mask, [d.num_heads]),
      };
      const tokens = [d.bos];
      let out;
      for (let t = 0; t < d.max_target_len; t++) {
        const input = BigInt64Array.from(tokens, BigInt);
        const decoderInput = new lib.Tensor("int64", input, [1, tokens.length]);
        out = await s.run({...fixed, decoder_input: decoderInput});
        const [, steps, size] = out.logits.dims;
        const last = out.logits.data.subarray((steps - 1) * size, steps * size);
        let best = 0;  // the first of the largest scores, as torch's argmax
        for (let i = 1; i < size; i++) if (last[i] > last[best]) best = i;
        tokens.push(best);
        if (best === d.eos) break;
      }
      const chosen = tokens.slice(1);  // the rows of the last run's maps predict these
      const end = chosen.indexOf(d.eos);
      const said = (end < 0 ? chosen : chosen.slice(0, end))
        .filter(i => i !== d.pad && i !== d.bos).map(i => d.phonemes[i]);
      // The last run's input is <bos> and every chosen token but the last: its maps are
      // the maps of the pronunciation, with no run more.
      return {said, cut: end < 0, rows: chosen.map(i => d.phonemes[i]), out};
    }

    button.addEventListener("click", () => {
      const text = word.value, model = Number(seed.value), showValues = values.checked;
      const off = heads.map((h, i) => h.checked ? -1 : i).filter(i => i >= 0);
      const valid = text.length >= d.min_letters && text.length <= d.max_letters
        && Array.from(text).every(ch => Object.hasOwn(d.letters, ch));
      if (!valid) {
        f.answer(() => [message(d.message, text)]);
        return;
      }
      f.answer(async () => {
        const {said, cut, rows, out} = await pronounce(text, model, off);
        const line = `${text}: ${said.join(" ")}`
          + (cut ? ` (cut at ${said.length} phonemes)` : "")
          + (off.length ? ` (heads [${off.join(", ")}] off)` : "");
        const maps = showValues ? out.value_weighted : out.weights;
        const [, numHeads, T, S] = maps.dims;
        const what = showValues ? "attention weights times the size of what each letter adds"
          : "attention weights";
        const drawn = Array.from({length: numHeads}, (_, h) => {
          const title = `head ${h}` + (off.includes(h) ? " (off)" : "");
          return heatmap(data.colours, {
            rows, cols: Array.from(text), title, xlabel: "letters", ylabel: "phoneme predicted",
            value: (r, c) => maps.data[(h * T + r) * S + c],
            label: `${title}: ${what} of the phonemes predicted (rows: ${rows.join(" ")}) `
              + `over the letters of ${text} (columns), on a scale from 0 to 1`});
        });
        return [line, [...drawn, colourBar(data.colours, "attention weight")]];
      });
    });

    root.append(el("div", {class: "cw-controls"},
                   el("label", {}, "word ", word), el("label", {}, "seed ", seed),
                   el("fieldset", {class: "cw-heads"}, el("legend", {}, "heads on"),
                      ...heads.map((h, i) => el("label", {}, h, ` head ${i}`))),
                   el("label", {}, values, " values"), button),
                f.text, f.maps);
  }

  const WIDGETS = {split, alignment, "head-lab": headLab};

  // --- the page ----------------------------------------------------------------------------

  /** Fill every placeholder not filled yet (data.js first, with the page). */
  function mountAll() {
    const roots = Array.from(document.querySelectorAll(".chapter-widget[data-widget]"))
      .filter(root => !root.dataset.status);
    for (const root of roots) {
      root.dataset.status = "loading";
      root.dataset.runs = "0";
      asset("data").then(data => {
        const make = WIDGETS[root.dataset.widget];
        if (!make) throw new Error(`no widget named ${root.dataset.widget}`);
        root.dataset.status = "idle";
        make(root, data);  // the split answers at once, for its first stop
      }).catch(error => {
        root.textContent = `The widget could not load: ${error.message}`;
        root.dataset.status = "error";
      });
    }
  }

  document.head.appendChild(el("link", {rel: "stylesheet", href: BASE + "widgets.css"}));
  self.chapterWidgets = {mountAll};
  mountAll();
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
})();
