// The replay player's shell (dashboard/replay_view.py fills the page, dashboard/player.html): score,
// clock, controls, a timeline with the goals, the cars' boost, goal and touch lists, around one view
// of the field. It runs after the page's data (G: dashboard/field.py's geometry, D: the replay's
// payload, START_FRAME, AUTOPLAY) and the view's script, which defines createView(canvas, env)
// (dashboard/player3d.js or dashboard/field2d.js): the shell calls it once, then layout(width) and
// draw(frame). Positions arrive once, as base64 int16 arrays, and are animated here, so play,
// pause, speed and scrubbing never wait on the server.

function decode(b64) {
  const bin = atob(b64); const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new Int16Array(bytes.buffer);
}
const BALL = decode(D.ball), CARS = decode(D.carData), NF = D.carFields, T = D.steps, C = D.cars, U = D.unitScale;
const canvas = document.getElementById("field");
const scrub = document.getElementById("scrub"), playBtn = document.getElementById("play");
const speedSel = document.getElementById("speed");
scrub.max = Math.max(T - 1, 0);
let frame = START_FRAME, pos = frame, playing = false, last = null;

function clock(sec) { sec = Math.max(0, sec); const m = Math.floor(sec / 60), s = Math.floor(sec % 60);
  return m + ":" + String(s).padStart(2, "0"); }
function stepTime(step) { return step * D.dt; }
// The game clock at frame f, as the scoreboard shows it: counting down from the game's length (then
// "+m:ss OT"), as Rocket League's does; a replay that does not give its length counts up.
function gameClock(f) {
  if (!D.gameSeconds) return clock(stepTime(f));
  const left = D.gameSeconds - stepTime(f);
  return left >= 0 ? clock(left) : "+" + clock(-left) + " OT";
}
function ball(f) { const o = f * 4; return { x: BALL[o], y: BALL[o + 1], z: BALL[o + 2], speed: BALL[o + 3] }; }
function car(i, f) {
  const o = (f * C + i) * NF;
  return { x: CARS[o], y: CARS[o + 1], z: CARS[o + 2],
           fwd: [CARS[o + 3] / U, CARS[o + 4] / U, CARS[o + 5] / U], up: [CARS[o + 6] / U, CARS[o + 7] / U, CARS[o + 8] / U],
           yaw: Math.atan2(CARS[o + 4], CARS[o + 3]), boost: CARS[o + 9],
           onGround: (CARS[o + 10] & 1) > 0, demolished: (CARS[o + 10] & 2) > 0, speed: CARS[o + 11],
           boosting: f > 0 && CARS[o + 9] < CARS[o + 9 - C * NF] && !(CARS[o + 10] & 2),
           team: D.teams[i], label: D.labels[i], name: D.names[i] };
}
// A pad is up at frame f unless f falls in one of its [from, to) down intervals.
function padUp(p, f) {
  const downs = D.padDowns[p];
  let lo = 0, hi = downs.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (downs[mid][1] <= f) lo = mid + 1; else hi = mid; }
  return !(lo < downs.length && downs[lo][0] <= f);
}
function scoreAt(f) { let b = 0, o = 0; for (const g of D.goals) if (g.step <= f) { if (g.team === 0) b++; else o++; } return [b, o]; }
const env = { G: G, D: D, ball: ball, car: car, padUp: padUp, scoreAt: scoreAt, redraw: () => view.draw(frame) };
const view = createView(canvas, env);

function layout() {
  view.layout(Math.max(320, document.getElementById("left").clientWidth));
  buildTimeline();
  draw();
}

function draw() {
  const f = frame;
  view.draw(f);
  const [b, o] = scoreAt(f);
  document.getElementById("score").innerHTML =
    '<span class="blue">' + esc(D.blue) + " " + b + '</span> &ndash; <span class="orange">' + o + " " + esc(D.orange) + "</span>";
  document.getElementById("clock").textContent = D.gameSeconds ? gameClock(f) : clock(stepTime(f)) + " / " + clock(stepTime(T - 1));
  document.getElementById("stepinfo").textContent = "step " + f * D.stride + " / " + (D.replaySteps - 1);
  scrub.value = f;
  let rows = "";
  for (let i = 0; i < C; i++) {
    const c = car(i, f);
    const state = c.demolished ? "demolished" : (c.onGround ? "" : "air");
    rows += '<div class="carrow"><span class="' + ["blue", "orange"][c.team] + '" style="width:26px">' + c.label +
      '</span><div class="bar" title="boost ' + c.boost + '"><div style="width:' + c.boost + '%"></div></div>' +
      '<span class="muted" style="flex:0 0 auto;text-align:right;font-size:12px">' + c.speed + " uu/s " + state + "</span></div>";
  }
  const bl = ball(f);
  document.getElementById("cars").innerHTML = rows + '<div class="muted">ball ' + bl.speed + " uu/s, z " + bl.z + "</div>";
}

function esc(s) { return String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c])); }

function seek(step, play) {
  frame = Math.min(Math.max(Math.round(step), 0), T - 1); pos = frame;
  setPlaying(play); draw();
}
function setPlaying(p) {
  playing = p && frame < T - 1; last = null;
  playBtn.innerHTML = playing ? "&#10074;&#10074; Pause" : "&#9654; Play";
  if (playing) requestAnimationFrame(tick);
}
function tick(now) {
  if (!playing) return;
  if (last !== null) {
    pos += (now - last) / 1000 * parseFloat(speedSel.value) / D.dt;
    const f = Math.min(Math.floor(pos), T - 1);
    if (f !== frame) { frame = f; draw(); }
    if (frame >= T - 1) { setPlaying(false); return; }
  }
  last = now;
  requestAnimationFrame(tick);
}

const THUMB = 16;  // px: Chromium's and Firefox's range thumb; its centre runs from THUMB/2 to width - THUMB/2
function buildTimeline() {
  const tl = document.getElementById("timeline"); tl.innerHTML = "";
  for (const g of D.goals) {
    const p = g.step / Math.max(T - 1, 1), jump = () => seek(g.step - D.goalLead / D.dt, true);
    const left = "calc(" + THUMB / 2 + "px + (100% - " + THUMB + "px) * " + p + ")";
    const d = document.createElement("div"); d.className = "tick";
    d.style.left = left; d.style.background = G.teamColors[g.team];
    d.title = ["Blue", "Orange"][g.team] + " goal at " + gameClock(g.step) + ": " + g.score; d.onclick = jump;
    const s = document.createElement("span"); s.className = "tickscore " + ["blue", "orange"][g.team];
    s.style.left = left; s.textContent = g.score; s.onclick = jump;
    tl.appendChild(d); tl.appendChild(s);
  }
}

function fillList(id, items, text, onPick) {
  const el = document.getElementById(id);
  if (!items.length) { el.innerHTML = '<div class="muted">none</div>'; return; }
  for (const it of items) {
    const d = document.createElement("div"); d.innerHTML = text(it); d.onclick = () => onPick(it); el.appendChild(d);
  }
}
fillList("goals", D.goals, (g) => gameClock(g.step) + ' <span class="' + ["blue", "orange"][g.team] + '">' +
  ["Blue", "Orange"][g.team] + "</span> goal" + (g.label ? " (" + g.label + ")" : "") + " " + g.score,
  (g) => seek(g.step - D.goalLead / D.dt, true));
fillList("touches", D.touches, (t) => gameClock(t.step) + ' <span class="' + ["blue", "orange"][t.team] + '">' +
  t.label + "</span> touch", (t) => seek(t.step, false));

playBtn.onclick = () => { if (frame >= T - 1) { frame = 0; pos = 0; } setPlaying(!playing); };
document.getElementById("back").onclick = () => seek(frame - 1, false);
document.getElementById("fwd").onclick = () => seek(frame + 1, false);
scrub.oninput = () => seek(parseInt(scrub.value), false);
document.addEventListener("keydown", (e) => {
  if (e.code === "Space" && e.target.tagName !== "SELECT") { e.preventDefault(); playBtn.click(); } });
window.addEventListener("resize", layout);
layout();
if (AUTOPLAY) setPlaying(true);
// For the page's owner (and the browser tests): where the player is, and a way to move it.
window.player = { seek: seek, frame: () => frame, cars: C, ball: ball, car: car, padUp: padUp, view: view };
