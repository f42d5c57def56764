// sacbot viewer: draws Tank Royale battles on a canvas, live (as an observer over WebSocket) or from a
// recording (newline-delimited observer messages). Plain JS, no framework. Colours and sizes come from
// style.json, which the clip renderer (sacbot/viewer/render.py) reads too.
"use strict";

// ---- colours ---------------------------------------------------------------------------------------------

function parseColor(text) {
  let h = String(text || "").trim().replace(/^#/, "");
  if (h.length === 3) h = h.split("").map((c) => c + c).join("");
  const n = parseInt(h.slice(0, 6), 16);
  if (h.length < 6 || Number.isNaN(n)) return [255, 255, 255, 1];
  const a = h.length >= 8 ? parseInt(h.slice(6, 8), 16) / 255 : 1;
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255, a];
}

function toHsl([r, g, b]) {
  r /= 255; g /= 255; b /= 255;
  const max = Math.max(r, g, b), min = Math.min(r, g, b);
  const l = (max + min) / 2;
  if (max === min) return [0, 0, l];
  const d = max - min;
  const s = l > 0.5 ? d / (2 - max - min) : d / (max + min);
  let h;
  if (max === r) h = (g - b) / d + (g < b ? 6 : 0);
  else if (max === g) h = (b - r) / d + 2;
  else h = (r - g) / d + 4;
  return [h / 6, s, l];
}

function fromHsl([h, s, l]) {
  if (s === 0) return [l * 255, l * 255, l * 255].map(Math.round);
  const q = l < 0.5 ? l * (1 + s) : l + s - l * s;
  const p = 2 * l - q;
  const f = (t) => {
    if (t < 0) t += 1;
    if (t > 1) t -= 1;
    if (t < 1 / 6) return p + (q - p) * 6 * t;
    if (t < 1 / 2) return q;
    if (t < 2 / 3) return p + (q - p) * (2 / 3 - t) * 6;
    return p;
  };
  return [f(h + 1 / 3), f(h), f(h - 1 / 3)].map((v) => Math.round(v * 255));
}

const clamp01 = (v) => Math.min(1, Math.max(0, v));
// Lightness changed as the official GUI does: plus `add`, times `mult`.
function shade(rgb, add = 0, mult = 1) {
  const [h, s, l] = toHsl(rgb);
  return fromHsl([h, s, clamp01((l + add) * mult)]);
}
const rgba = (rgb, a = 1) => `rgba(${rgb[0]},${rgb[1]},${rgb[2]},${a})`;

// ---- deterministic randomness for explosions (the same numbers as render.py) ---------------------------

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const RAD = Math.PI / 180;
const DEFAULT_SETUP = { arenaWidth: 800, arenaHeight: 600, numberOfRounds: 0 };
const LIVE_KEEP = 40000; // turns a live page holds (about 22 minutes at 30 turns a second)

class Viewer {
  constructor(style, config) {
    this.S = style;
    this.config = config;
    this.mode = config.mode; // "live" or "replay"
    this.canvas = document.getElementById("arena");
    this.ctx = this.canvas.getContext("2d");
    this.game = null;
    this.handshakeSetup = null;
    this.lobby = [];
    this.cursor = 0;
    this.playing = true;
    this.following = this.mode === "live";
    this.speed = 1;
    this.acc = 0;
    this.last = null;
    this.zoom = 1;
    this.followed = null; // bot id
    this.dirty = true;
    this.drawn = -1;
    this.draws = 0; // how many times the canvas was drawn: tests wait for a redraw
    this.connected = false;
    this.svgCache = new Map();
    this.view = { k: 1, ox: 0, oy: 0 };
    this.colorCache = new Map();
    this.marksAt = -1;
    this.sideAt = -1;
    this.bindControls();
    new ResizeObserver(() => this.resize()).observe(this.canvas);
    this.resize();
    requestAnimationFrame((ts) => this.frame(ts));
  }

  // ---- the timeline --------------------------------------------------------------------------------------

  newGame(setup, participants) {
    this.game = {
      setup: setup || this.handshakeSetup || DEFAULT_SETUP,
      participants: new Map((participants || []).map((p) => [p.id, p])),
      frames: [],
      roundStarts: [],
      results: null,
      ended: null,
      aborted: false,
    };
    this.cursor = 0;
    this.acc = 0;
    this.dirty = true;
    this.marksAt = -1;
  }

  ingest(msg) {
    switch (msg.type) {
      case "GameStartedEventForObserver":
        this.newGame(msg.gameSetup, msg.participants);
        if (this.mode === "live") { this.following = true; this.playing = true; }
        break;
      case "TickEventForObserver": {
        if (!this.game || this.game.ended || this.game.aborted) this.newGame(null, null);
        const g = this.game;
        const prev = g.frames[g.frames.length - 1];
        if (!prev || prev.tick.roundNumber !== msg.roundNumber) {
          g.roundStarts.push({ round: msg.roundNumber, index: g.frames.length });
        }
        for (const b of msg.botStates) {
          if (!g.participants.has(b.id)) {
            g.participants.set(b.id, { id: b.id, name: b.name || `Bot ${b.id}`, version: b.version || "" });
          }
        }
        g.frames.push({ tick: msg, results: g.results, roundEnded: false });
        if (this.mode === "live" && g.frames.length > LIVE_KEEP) this.trim(LIVE_KEEP / 4);
        break;
      }
      case "RoundEndedEventForObserver":
        if (this.game) {
          this.game.results = msg.results;
          const last = this.game.frames[this.game.frames.length - 1];
          if (last) { last.results = msg.results; last.roundEnded = true; }
        }
        break;
      case "GameEndedEventForObserver":
        if (this.game) {
          this.game.results = msg.results;
          this.game.ended = msg;
          const last = this.game.frames[this.game.frames.length - 1];
          if (last) last.results = msg.results;
        }
        break;
      case "GameAbortedEvent":
        if (this.game) this.game.aborted = true;
        break;
      case "BotListUpdate":
        this.lobby = msg.bots || [];
        break;
      default:
        break;
    }
    this.dirty = true;
  }

  get frames() { return this.game ? this.game.frames : []; }

  // A long live game keeps its newest LIVE_KEEP turns; the oldest go in blocks.
  trim(n) {
    const g = this.game;
    g.frames.splice(0, n);
    g.roundStarts = g.roundStarts.map((r) => ({ round: r.round, index: r.index - n })).filter((r) => r.index >= 0);
    this.cursor = Math.max(0, this.cursor - n);
    this.marksAt = -1;
  }

  setCursor(i) {
    const n = this.frames.length;
    const c = Math.max(0, Math.min(n - 1, Math.floor(i)));
    if (c !== this.cursor) { this.cursor = c; this.dirty = true; }
  }

  // ---- replay and live sources ---------------------------------------------------------------------------

  async loadRecording(url) {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`${url}: ${response.status}`);
    const text = await response.text();
    for (const line of text.split("\n")) {
      if (line.trim()) this.ingest(JSON.parse(line));
    }
    const g = this.game;
    const turns = g ? g.frames.length : 0;
    const rounds = g ? g.roundStarts.length : 0;
    this.setStatus(`${turns} turns, ${rounds} round${rounds === 1 ? "" : "s"}` +
      (this.config.truncated ? " (the recording was cut short)" : ""));
    this.cursor = 0;
    document.body.dataset.ready = "1";
  }

  connect() {
    const secret = new URLSearchParams(location.hash.slice(1) || location.search.slice(1)).get("secret");
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/`;
    const ws = new WebSocket(url);
    ws.onmessage = (e) => {
      const msg = JSON.parse(e.data);
      if (msg.type === "ServerHandshake") {
        this.handshakeSetup = msg.gameSetup || null;
        const hs = { type: "ObserverHandshake", sessionId: msg.sessionId, name: "sacbot viewer",
          version: "1.0", author: "sacbot" };
        if (secret) hs.secret = secret;
        ws.send(JSON.stringify(hs));
        this.connected = true;
        this.setStatus(`observing ${url}`);
        document.body.dataset.ready = "1";
      } else {
        this.ingest(msg);
      }
    };
    ws.onclose = (e) => {
      this.connected = false;
      this.setStatus(`disconnected (${e.code}${e.reason ? " " + e.reason : ""}); retrying`, true);
      setTimeout(() => this.connect(), 2000);
    };
  }

  setStatus(text, bad = false) {
    const el = document.getElementById("status");
    el.textContent = text;
    el.classList.toggle("bad", bad);
  }

  // ---- controls ------------------------------------------------------------------------------------------

  bindControls() {
    const $ = (id) => document.getElementById(id);
    this.el = { play: $("play"), step: $("step"), live: $("live"), speed: $("speed"), seek: $("seek"),
      marks: $("marks"), position: $("position"), bots: $("bots"), scores: $("scores").tBodies[0],
      state: $("state"), stateTitle: $("state-title"), scans: $("show-scans"), labels: $("show-labels"),
      debug: $("show-debug") };
    const e = this.el;
    for (const s of this.S.speeds) {
      const o = document.createElement("option");
      o.value = String(s);
      o.textContent = `${s}x`;
      if (s === 1) o.selected = true;
      e.speed.appendChild(o);
    }
    e.live.hidden = this.mode !== "live";
    e.play.onclick = () => this.togglePlay();
    e.step.onclick = () => this.step(1);
    e.live.onclick = () => { this.following = true; this.playing = true; this.dirty = true; };
    e.speed.onchange = () => { this.speed = Number(e.speed.value); };
    e.seek.oninput = () => this.seek(Number(e.seek.value));
    for (const box of [e.scans, e.labels, e.debug]) box.onchange = () => { this.dirty = true; };
    document.addEventListener("keydown", (ev) => {
      if (ev.target && ev.target.tagName === "SELECT") return;
      if (ev.key === " ") { ev.preventDefault(); this.togglePlay(); }
      else if (ev.key === "ArrowRight") this.step(1);
      else if (ev.key === "ArrowLeft") this.step(-1);
    });
    this.canvas.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      this.zoom = Math.min(8, Math.max(1, this.zoom * (ev.deltaY < 0 ? 1.2 : 1 / 1.2)));
      this.dirty = true;
    }, { passive: false });
  }

  togglePlay() {
    this.playing = !this.playing;
    if (!this.playing) this.following = false;
    else if (this.cursor >= this.frames.length - 1 && this.mode === "replay") this.cursor = 0;
    this.acc = 0;
    this.dirty = true;
  }

  step(n) {
    this.playing = false;
    this.following = false;
    this.setCursor(this.cursor + n);
    this.dirty = true;
  }

  seek(i) {
    this.following = false;
    this.setCursor(i);
    if (this.mode === "live" && this.cursor >= this.frames.length - 1) this.following = true;
  }

  follow(id) {
    this.followed = this.followed === id ? null : id;
    this.dirty = true;
    this.sideAt = -1;
  }

  // ---- the animation loop --------------------------------------------------------------------------------

  frame(ts) {
    const dt = this.last === null ? 0 : Math.min(250, ts - this.last);
    this.last = ts;
    const n = this.frames.length;
    if (this.following) {
      if (n && this.cursor !== n - 1) { this.cursor = n - 1; this.dirty = true; }
    } else if (this.playing && n) {
      this.acc += (dt / 1000) * this.S.replayTps * this.speed;
      const steps = Math.floor(this.acc);
      if (steps > 0) {
        this.acc -= steps;
        this.setCursor(this.cursor + steps);
        if (this.cursor >= n - 1) {
          if (this.mode === "live") this.following = true;
          else this.playing = false;
        }
      }
    }
    if (this.dirty) {
      this.dirty = false;
      this.draw();
      this.updateControls();
      this.updateSide();
    }
    requestAnimationFrame((t) => this.frame(t));
  }

  resize() {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(this.canvas.clientWidth * dpr));
    const h = Math.max(1, Math.round(this.canvas.clientHeight * dpr));
    if (w !== this.canvas.width || h !== this.canvas.height) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
    this.dirty = true;
  }

  // ---- drawing -------------------------------------------------------------------------------------------

  color(value, fallback) {
    const key = value || fallback;
    let c = this.colorCache.get(key);
    if (!c) { c = parseColor(key); this.colorCache.set(key, c); }
    return c;
  }

  visibleDark(rgb) {
    const [h, s, l] = toHsl(rgb);
    return l < this.S.visibleDarkLightness ? fromHsl([h, s, this.S.visibleDarkLightness]) : rgb;
  }

  border(rgb) {
    return toHsl(rgb)[2] < this.S.darkBorderLightness ? this.S.darkBorder : this.S.border;
  }

  toScreen(x, y) {
    const v = this.view;
    return [v.ox + x * v.k, v.oy - y * v.k];
  }

  draw() {
    this.draws += 1;
    const S = this.S, ctx = this.ctx, cw = this.canvas.width, ch = this.canvas.height;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = S.canvas.background;
    ctx.fillRect(0, 0, cw, ch);
    const g = this.game;
    const setup = (g && g.setup) || this.handshakeSetup || DEFAULT_SETUP;
    const W = setup.arenaWidth, H = setup.arenaHeight;
    const base = Math.min(cw / W, ch / (H + 2 * S.canvas.padding));
    const k = base * this.zoom;
    const frame = g && g.frames[this.cursor];
    const tick = frame ? frame.tick : null;
    let cx = W / 2, cy = H / 2;
    if (tick && this.zoom > 1 && this.followed !== null) {
      const b = tick.botStates.find((s) => s.id === this.followed);
      if (b) { cx = b.x; cy = b.y; }
    }
    this.view = { k, ox: cw / 2 - cx * k, oy: ch / 2 + cy * k };
    const v = this.view;
    ctx.setTransform(k, 0, 0, -k, v.ox, v.oy); // arena units, y up
    ctx.fillStyle = S.canvas.ground;
    ctx.fillRect(0, 0, W, H);
    this.drawn = this.cursor;
    if (!tick) {
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.fillStyle = "#bbb";
      ctx.font = "16px sans-serif";
      ctx.textAlign = "center";
      const waiting = this.mode === "live"
        ? (this.connected ? "Waiting for a game" : "Connecting") : "Loading";
      const names = this.lobby.map((b) => `${b.name} ${b.version}`).join(", ");
      ctx.fillText(waiting + (names ? ` (connected bots: ${names})` : ""), cw / 2, ch / 2);
      this.drawIndicator(null);
      return;
    }
    const showScans = this.el.scans.checked;
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, 0, W, H);
    ctx.clip(); // scan arcs, explosions and debug graphics stay on the battlefield
    for (const b of tick.botStates) {
      this.drawTank(b);
      if (showScans) this.drawScan(b);
    }
    this.drawBursts();
    for (const bullet of tick.bulletStates) this.drawBullet(bullet, tick);
    if (this.el.debug.checked) {
      for (const b of tick.botStates) if (b.debugGraphics) this.drawDebug(b.debugGraphics);
    }
    ctx.restore();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    if (this.el.labels.checked) for (const b of tick.botStates) this.drawLabels(b);
    if (this.followed !== null) {
      const b = tick.botStates.find((s) => s.id === this.followed);
      if (b) {
        const [sx, sy] = this.toScreen(b.x, b.y);
        ctx.strokeStyle = S.follow.color;
        ctx.lineWidth = S.follow.width;
        ctx.beginPath();
        ctx.arc(sx, sy, S.follow.radius * k, 0, 2 * Math.PI);
        ctx.stroke();
      }
    }
    this.drawIndicator(tick);
  }

  drawTank(b) {
    const S = this.S, T = S.tank, D = S.defaults, ctx = this.ctx;
    const s = T.size / T.units;
    ctx.save();
    ctx.translate(b.x, b.y);
    ctx.scale(s, s);
    // Body and tracks turn with the body's direction.
    ctx.save();
    ctx.rotate(b.direction * RAD);
    const tracks = this.color(b.tracksColor, D.tracksColor);
    const trackMain = shade(tracks, 0, T.trackShade);
    const [lw, lh] = T.trackLinkSize;
    for (const [x, y, w, h] of T.tracks) {
      ctx.fillStyle = rgba(trackMain);
      ctx.fillRect(x, y, w, h);
      ctx.lineWidth = 10;
      ctx.strokeStyle = this.border(trackMain);
      ctx.strokeRect(x, y, w, h);
      ctx.fillStyle = rgba(shade(tracks, T.trackLinkLight));
      for (const lx of T.trackLinks) {
        ctx.fillRect(lx, y + h / 2 - lh / 2, lw, lh);
        ctx.strokeRect(lx, y + h / 2 - lh / 2, lw, lh);
      }
    }
    const body = this.color(b.bodyColor, D.bodyColor);
    ctx.fillStyle = rgba(body);
    ctx.fillRect(...T.body);
    ctx.fillStyle = `rgba(0,0,0,${T.bodyShadowAlpha})`;
    ctx.fillRect(...T.bodyShadow);
    ctx.lineWidth = T.borderWidth;
    ctx.strokeStyle = this.border(body);
    ctx.strokeRect(...T.body);
    ctx.restore();
    // Gun and turret turn with the gun's direction.
    ctx.save();
    ctx.rotate(b.gunDirection * RAD);
    const gun = this.color(b.gunColor, D.gunColor);
    const light = rgba(shade(gun, T.cannonLight)), dark = rgba(shade(gun, T.cannonDark));
    for (const [x, y, w, h] of T.cannon) {
      const grad = ctx.createLinearGradient(0, y, 0, y + h);
      grad.addColorStop(0, dark);
      grad.addColorStop(0.5, light);
      grad.addColorStop(1, dark);
      ctx.fillStyle = grad;
      ctx.fillRect(x, y, w, h);
      ctx.lineWidth = 6;
      ctx.strokeStyle = this.border(gun);
      ctx.strokeRect(x, y, w, h);
    }
    const turret = this.color(b.turretColor, D.turretColor);
    ctx.fillStyle = rgba(turret);
    ctx.fillRect(...T.turret);
    ctx.fillStyle = `rgba(0,0,0,${T.turretShadowAlpha})`;
    ctx.fillRect(...T.turretShadow);
    ctx.lineWidth = T.borderWidth;
    ctx.strokeStyle = this.border(turret);
    ctx.strokeRect(...T.turret);
    ctx.restore();
    // The radar: a dish over a round base (droids have none).
    if (!b.isDroid) {
      const radar = this.color(b.radarColor, D.radarColor);
      const edge = this.border(radar);
      ctx.rotate(b.radarDirection * RAD);
      const [[x0, y0], [qx, qy], [x1, y1]] = T.radarDish;
      ctx.beginPath();
      ctx.moveTo(x0, y0);
      ctx.quadraticCurveTo(qx, qy, x1, y1);
      ctx.closePath();
      ctx.fillStyle = rgba(radar);
      ctx.fill();
      ctx.lineWidth = 6;
      ctx.strokeStyle = edge;
      ctx.stroke();
      ctx.beginPath();
      ctx.arc(0, 0, T.radarCircle, 0, 2 * Math.PI);
      ctx.fill();
      ctx.stroke();
    }
    ctx.restore();
  }

  drawScan(b) {
    if (b.isDroid) return;
    const S = this.S, ctx = this.ctx;
    const color = this.visibleDark(this.color(b.scanColor, S.defaults.scanColor));
    const sweep = b.radarSweep || 0;
    const start = sweep >= 0 ? b.radarDirection - sweep : b.radarDirection;
    const end = start + Math.abs(sweep);
    const R = S.scan.radius;
    ctx.save();
    ctx.globalAlpha = S.scan.alpha;
    ctx.beginPath();
    ctx.moveTo(b.x, b.y);
    ctx.arc(b.x, b.y, R, start * RAD, end * RAD, false);
    ctx.closePath();
    if (Math.abs(sweep) >= S.scan.lineBelowSweep) {
      ctx.fillStyle = rgba(color);
      ctx.fill();
    } else {
      ctx.lineWidth = 1 / this.view.k;
      ctx.strokeStyle = rgba(color);
      ctx.stroke();
    }
    ctx.restore();
  }

  drawBullet(bullet, tick) {
    const S = this.S, ctx = this.ctx;
    const owner = tick.botStates.find((b) => b.id === bullet.ownerId);
    const color = this.visibleDark(this.color(bullet.color || (owner && owner.bulletColor),
      S.defaults.bulletColor));
    ctx.fillStyle = rgba(color);
    ctx.beginPath();
    ctx.arc(bullet.x, bullet.y, Math.sqrt(S.bullet.areaPerPower * bullet.power), 0, 2 * Math.PI);
    ctx.fill();
  }

  // Explosions are drawn from the events of the last turns, so seeking draws exactly what playing draws.
  drawBursts() {
    const B = this.S.bursts, frames = this.frames, i = this.cursor, now = frames[i].tick;
    const longest = Math.ceil(B.death.turns * (1 + B.death.delayShare)) + 1;
    for (let j = i; j >= 0 && j > i - longest; j--) {
      const t = frames[j].tick;
      if (t.roundNumber !== now.roundNumber) break;
      const age = now.turnNumber - t.turnNumber;
      for (const ev of t.events || []) {
        if (ev.type === "BulletHitBotEvent" && age < B.botHit.turns) {
          this.burst(ev.bullet.x, ev.bullet.y, B.botHit, age);
        } else if (ev.type === "BulletHitWallEvent" && age < B.bulletHitWall.turns) {
          this.burst(ev.bullet.x, ev.bullet.y, B.bulletHitWall, age);
        } else if (ev.type === "BulletHitBulletEvent" && age < B.bulletHitBullet.turns) {
          this.burst((ev.bullet.x + ev.hitBullet.x) / 2, (ev.bullet.y + ev.hitBullet.y) / 2,
            B.bulletHitBullet, age);
        } else if (ev.type === "BotDeathEvent") {
          const at = this.lastSeen(j, ev.victimId);
          if (at) this.explosion(at.x, at.y, t.roundNumber, t.turnNumber, ev.victimId, age);
        }
      }
    }
  }

  lastSeen(j, id) {
    for (let n = j; n >= 0 && n > j - 3; n--) {
      const b = this.frames[n].tick.botStates.find((s) => s.id === id);
      if (b) return b;
    }
    return null;
  }

  burst(x, y, spec, age) {
    if (age < 0 || age >= spec.turns) return;
    const t = age / spec.turns;
    const diameter = spec.from + (spec.to - spec.from) * t;
    const colors = this.S.bursts.colors;
    const pos = t * (colors.length - 1);
    const ct = Math.min(colors.length - 2, Math.floor(pos));
    const a = this.color(colors[ct]), b = this.color(colors[ct + 1]);
    const f = pos - ct;
    const mix = [0, 1, 2].map((n) => Math.round(a[n] + (b[n] - a[n]) * f));
    const ctx = this.ctx;
    ctx.fillStyle = rgba(mix, 1 - t);
    ctx.beginPath();
    ctx.arc(x, y, diameter / 2, 0, 2 * Math.PI);
    ctx.fill();
  }

  explosion(x, y, round, turn, victim, age) {
    const D = this.S.bursts.death;
    const rnd = mulberry32(round * 1000003 + turn * 1009 + victim);
    const part = D.radius * D.partShare;
    const spec = { from: part * D.startShare, to: part, turns: D.turns };
    for (let n = 0; n < D.parts; n++) {
      let px = x, py = y;
      if (n > 0) {
        const ox = (D.radius - part) * (1 - Math.sqrt(rnd())) * (rnd() > 0.5 ? 1 : -1);
        const oy = (D.radius - part) * (1 - Math.sqrt(rnd())) * (rnd() > 0.5 ? 1 : -1);
        px += ox;
        py += oy;
      }
      const delay = Math.floor(rnd() * D.turns * D.delayShare);
      this.burst(px, py, spec, age - delay);
    }
  }

  drawDebug(svg) {
    let entry = this.svgCache.get(svg);
    if (!entry) {
      if (this.svgCache.size > 64) this.svgCache.delete(this.svgCache.keys().next().value);
      const off = svg.includes("<!-- auto-transform: off -->");
      // Text in the SVG reads the right way up although y points up (as in the official GUI).
      const fixed = off ? svg : svg.replace(/<\s*\/\s*svg\s*>/,
        "<style>text{transform-box:fill-box;transform-origin:50% 50%;transform:scaleY(-1)}</style></svg>");
      const img = new Image();
      entry = { img, ok: false, off, ...svgSize(svg, this.game.setup) };
      img.onload = () => { entry.ok = true; this.dirty = true; };
      img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(fixed);
      this.svgCache.set(svg, entry);
    }
    if (!entry.ok) return;
    const ctx = this.ctx;
    ctx.save();
    if (entry.off) ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(entry.img, entry.x, entry.y, entry.w, entry.h);
    ctx.restore();
  }

  drawLabels(b) {
    const S = this.S, L = S.labels, ctx = this.ctx, k = this.view.k;
    const [sx, sy] = this.toScreen(b.x, b.y);
    const px = Math.max(L.minFontPx, L.font * k);
    ctx.font = `${px}px sans-serif`;
    ctx.textAlign = "center";
    ctx.textBaseline = "alphabetic";
    ctx.fillStyle = L.color;
    ctx.fillText(b.energy.toFixed(1), sx, sy - L.energyBaseline * k);
    const p = this.game.participants.get(b.id) || { name: b.name || `Bot ${b.id}`, version: b.version || "" };
    ctx.fillText(`${p.name} ${p.version} (${b.id})`, sx, sy - L.nameBaseline * k);
    if (p.teamName) ctx.fillText(`${p.teamName} ${p.teamVersion || ""} (${p.teamId})`, sx, sy - (L.nameBaseline - 14) * k);
    const [bw, bh, gap] = L.energyBar;
    const full = b.isDroid ? 120 : 100;
    const share = Math.max(0, Math.min(1, b.energy / full));
    ctx.fillStyle = L.energyBarBack;
    ctx.fillRect(sx - (bw / 2) * k, sy - (gap + bh) * k, bw * k, bh * k);
    ctx.fillStyle = b.energy < L.lowEnergy ? L.energyLow : L.energyHigh;
    ctx.fillRect(sx - (bw / 2) * k, sy - (gap + bh) * k, bw * share * k, bh * k);
  }

  drawIndicator(tick) {
    const I = this.S.indicator, ctx = this.ctx;
    const parts = [
      [this.mode === "live" ? "LIVE" : "REPLAY", I.statusFont, this.mode === "live" ? I.live : I.replay],
      [`ROUND ${tick ? tick.roundNumber : 0}`, I.infoFont, I.round],
      [`TURN ${tick ? tick.turnNumber : 0}`, I.infoFont, I.turn],
    ];
    let x = I.x;
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    for (const [text, font, bg] of parts) {
      ctx.font = font;
      const w = ctx.measureText(text).width + 2 * I.padding;
      ctx.fillStyle = bg;
      ctx.beginPath();
      ctx.roundRect(x, I.y, w, I.height, I.radius);
      ctx.fill();
      ctx.fillStyle = I.text;
      ctx.fillText(text, x + I.padding, I.y + I.height / 2 + 1);
      x += w;
    }
  }

  // ---- controls and the side panel -----------------------------------------------------------------------

  updateControls() {
    const e = this.el, n = this.frames.length;
    e.play.textContent = this.playing ? "Pause" : "Play";
    e.live.classList.toggle("on", this.following);
    e.seek.max = String(Math.max(0, n - 1));
    e.seek.value = String(this.cursor);
    const f = this.frames[this.cursor];
    const total = this.game && this.game.setup.numberOfRounds;
    e.position.textContent = f
      ? `round ${f.tick.roundNumber}${total ? "/" + total : ""}, turn ${f.tick.turnNumber}` : "";
    const g = this.game;
    if (g && (this.marksAt !== n) && (this.mode === "replay" || n - this.marksAt > 60 || this.marksAt < 0)) {
      this.marksAt = n;
      e.marks.textContent = "";
      for (const r of g.roundStarts) {
        if (r.index === 0 || n < 2) continue;
        const m = document.createElement("span");
        m.style.left = `${(100 * r.index) / (n - 1)}%`;
        m.title = `round ${r.round}`;
        e.marks.appendChild(m);
      }
    }
  }

  updateSide() {
    const g = this.game;
    if (!g) return;
    const f = g.frames[this.cursor];
    if (!f) return;
    const tick = f.tick, e = this.el;
    const alive = new Map(tick.botStates.map((b) => [b.id, b]));
    const ids = [...g.participants.keys()].sort((a, b) => a - b);
    if (e.bots.children.length !== ids.length || this.sideAt < 0) {
      e.bots.textContent = "";
      for (const id of ids) {
        const li = document.createElement("li");
        li.dataset.id = String(id);
        li.innerHTML = '<span class="swatch"></span><span class="name"></span><span class="energy"></span>' +
          '<span class="bar"><i></i></span>';
        li.onclick = () => this.follow(id);
        e.bots.appendChild(li);
      }
    }
    for (const li of e.bots.children) {
      const id = Number(li.dataset.id), p = g.participants.get(id), b = alive.get(id);
      li.classList.toggle("dead", !b);
      li.classList.toggle("followed", this.followed === id);
      li.querySelector(".name").textContent = `${p.name} ${p.version || ""} (${id})`;
      li.querySelector(".energy").textContent = b ? b.energy.toFixed(1) : "dead";
      if (b) li.querySelector(".swatch").style.background = rgba(this.color(b.bodyColor, this.S.defaults.bodyColor));
      const full = b && b.isDroid ? 120 : 100;
      li.querySelector(".bar i").style.width = `${b ? Math.max(0, Math.min(100, (100 * b.energy) / full)) : 0}%`;
    }
    const rows = f.results || ids.map((id) => ({ rank: "", id, name: g.participants.get(id).name,
      totalScore: 0, survival: 0, bulletDamage: 0, ramDamage: 0, firstPlaces: 0 }));
    e.scores.innerHTML = rows.map((r) =>
      `<tr><td>${r.rank}</td><td>${esc(r.name)}</td><td>${r.totalScore}</td><td>${r.survival}</td>` +
      `<td>${r.bulletDamage}</td><td>${r.ramDamage}</td><td>${r.firstPlaces}</td></tr>`).join("");
    const b = this.followed !== null ? alive.get(this.followed) : null;
    if (this.followed === null) {
      e.stateTitle.textContent = "Followed bot";
      e.state.innerHTML = "<dt>Click a bot in the list to follow it.</dt>";
    } else if (!b) {
      e.stateTitle.textContent = `${g.participants.get(this.followed).name} (${this.followed})`;
      e.state.innerHTML = "<dt>Not in this turn (dead).</dt>";
    } else {
      e.stateTitle.textContent = `${g.participants.get(b.id).name} (${b.id})`;
      const fields = [["energy", b.energy], ["x", b.x], ["y", b.y], ["direction", b.direction],
        ["gun direction", b.gunDirection], ["radar direction", b.radarDirection], ["radar sweep", b.radarSweep],
        ["speed", b.speed], ["turn rate", b.turnRate], ["gun turn rate", b.gunTurnRate],
        ["radar turn rate", b.radarTurnRate], ["gun heat", b.gunHeat], ["enemies", b.enemyCount]];
      let html = fields.map(([k, v]) => `<dt>${k}</dt><dd>${typeof v === "number" ? round2(v) : v}</dd>`).join("");
      if (b.stdOut) html += `<dt>stdout</dt><dd>${esc(b.stdOut)}</dd>`;
      if (b.stdErr) html += `<dt>stderr</dt><dd>${esc(b.stdErr)}</dd>`;
      e.state.innerHTML = html;
    }
    this.sideAt = this.cursor;
  }

  // What tests (and the console) read.
  state() {
    const f = this.frames[this.cursor];
    return { mode: this.mode, cursor: this.cursor, frames: this.frames.length, playing: this.playing,
      following: this.following, speed: this.speed, connected: this.connected, drawn: this.drawn,
      draws: this.draws,
      round: f ? f.tick.roundNumber : 0, turn: f ? f.tick.turnNumber : 0,
      rounds: this.game ? this.game.roundStarts.length : 0, followed: this.followed,
      arena: this.game ? [this.game.setup.arenaWidth, this.game.setup.arenaHeight] : null };
  }

  tick(i) {
    const f = this.frames[i === undefined ? this.cursor : i];
    return f ? f.tick : null;
  }
}

function svgSize(svg, setup) {
  const num = (name) => {
    const m = svg.match(new RegExp(`<svg[^>]*\\s${name}\\s*=\\s*["']([-\\d.]+)`));
    return m ? Number(m[1]) : null;
  };
  const vb = svg.match(/<svg[^>]*\sviewBox\s*=\s*["']\s*([-\d.]+)[\s,]+([-\d.]+)[\s,]+([-\d.]+)[\s,]+([-\d.]+)/);
  const w = num("width"), h = num("height");
  if (w && h) return { x: 0, y: 0, w, h };
  if (vb) return { x: Number(vb[1]), y: Number(vb[2]), w: Number(vb[3]), h: Number(vb[4]) };
  return { x: 0, y: 0, w: setup.arenaWidth, h: setup.arenaHeight };
}

const round2 = (v) => (Math.round(v * 100) / 100).toString();
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

(async function main() {
  const [style, config] = await Promise.all(
    ["style.json", "config.json"].map((u) => fetch(u).then((r) => r.json())));
  if (config.title) document.getElementById("title").textContent = config.title;
  const viewer = new Viewer(style, config);
  window.sacbotViewer = viewer;
  if (config.mode === "live") viewer.connect();
  else {
    try {
      await viewer.loadRecording(config.recording);
    } catch (err) {
      viewer.setStatus(`cannot load the recording: ${err}`, true);
    }
  }
})();
