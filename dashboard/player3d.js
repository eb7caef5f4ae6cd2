// The replay player's 3D view: the soccar field (floor, walls, goals, boost pads with their state),
// the ball and every car (orientation, boost, team colour), drawn with WebGL 1 and no library, so
// the dashboard shows it with no network. The player shell (dashboard/replay_view.py) calls
// createView(canvas, env) once and then layout(width) and draw(frame); env gives the geometry
// (env.G, dashboard/field.py), the payload (env.D) and per-frame accessors (ball, car, padUp).
//
// Everything is built and placed in the game's own frame (uu, z up). That frame is left-handed,
// so the camera mirrors x on the way to the screen (MIRROR below): a right-handed drawing of the
// game frame would show the field flipped. Lighting is computed in the game frame, where the
// normals live, so the mirror does not touch it.

function createView(canvas, env) {
  "use strict";
  const G = env.G, D = env.D;
  const note = document.getElementById("viewnote");
  const stage = canvas.parentElement;
  const gl = canvas.getContext("webgl", { antialias: true });
  if (!gl) {
    note.style.display = "flex";
    note.textContent = "This browser cannot draw WebGL, so the 3D view is off; choose the 2D view above the player.";
    return { layout(width) { canvas.style.height = Math.round(width * 9 / 16) + "px"; }, draw() {}, project() { return null; } };
  }

  // ------------------------------------------------------------------ vector and matrix helpers
  const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
  const add = (a, b) => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
  const scale = (a, k) => [a[0] * k, a[1] * k, a[2] * k];
  const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const norm = (a) => { const l = Math.hypot(a[0], a[1], a[2]); return l > 1e-9 ? scale(a, 1 / l) : [0, 0, 0]; };
  const MIRROR = [-1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];  // column-major, x -> -x

  function multiply(a, b) {  // column-major 4x4: a * b
    const out = new Array(16);
    for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) {
      let s = 0;
      for (let k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
      out[c * 4 + r] = s;
    }
    return out;
  }
  function perspective(fovy, aspect, near, far) {
    const f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
    return [f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0];
  }
  function lookAt(eye, target, up) {
    const z = norm(sub(eye, target)), x = norm(cross(up, z)), y = cross(z, x);
    return [x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0,
            -dot(x, eye), -dot(y, eye), -dot(z, eye), 1];
  }
  // A rigid placement: local axes (forward, side, up) as columns, then a translation.
  function placement(fwd, side, up, at) {
    return [fwd[0], fwd[1], fwd[2], 0, side[0], side[1], side[2], 0, up[0], up[1], up[2], 0, at[0], at[1], at[2], 1];
  }
  const IDENTITY = placement([1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]);

  // ------------------------------------------------------------------ shaders
  const VS = "attribute vec3 aPos; attribute vec3 aNormal; uniform mat4 uViewProj; uniform mat4 uModel;" +
    "varying vec3 vNormal; void main() { vNormal = (uModel * vec4(aNormal, 0.0)).xyz;" +
    "gl_Position = uViewProj * (uModel * vec4(aPos, 1.0)); }";
  const FS = "precision mediump float; uniform vec4 uColor; uniform float uLit; uniform vec3 uLight;" +
    "varying vec3 vNormal; void main() { float k = 1.0;" +
    "if (uLit > 0.5) { k = 0.5 + 0.5 * abs(dot(normalize(vNormal), uLight)); }" +
    "gl_FragColor = vec4(uColor.rgb * k, uColor.a); }";
  function shader(type, source) {
    const s = gl.createShader(type);
    gl.shaderSource(s, source); gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
    return s;
  }
  const prog = gl.createProgram();
  gl.attachShader(prog, shader(gl.VERTEX_SHADER, VS));
  gl.attachShader(prog, shader(gl.FRAGMENT_SHADER, FS));
  gl.linkProgram(prog);
  gl.useProgram(prog);
  const aPos = gl.getAttribLocation(prog, "aPos"), aNormal = gl.getAttribLocation(prog, "aNormal");
  const uViewProj = gl.getUniformLocation(prog, "uViewProj"), uModel = gl.getUniformLocation(prog, "uModel");
  const uColor = gl.getUniformLocation(prog, "uColor"), uLit = gl.getUniformLocation(prog, "uLit");
  gl.uniform3fv(gl.getUniformLocation(prog, "uLight"), norm([0.35, -0.45, 0.82]));
  gl.enableVertexAttribArray(aPos);
  gl.enableVertexAttribArray(aNormal);

  // ------------------------------------------------------------------ meshes
  function mesh(positions, normals, mode) {
    const pb = gl.createBuffer(); gl.bindBuffer(gl.ARRAY_BUFFER, pb);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(positions), gl.STATIC_DRAW);
    const nb = gl.createBuffer(); gl.bindBuffer(gl.ARRAY_BUFFER, nb);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(normals || positions.map(() => 0)), gl.STATIC_DRAW);
    return { pb: pb, nb: nb, count: positions.length / 3, mode: mode === undefined ? gl.TRIANGLES : mode };
  }
  // Triangles of a flat polygon (convex, corners in order) with one normal.
  function polygon(corners, normal) {
    const p = [], n = [];
    for (let i = 1; i + 1 < corners.length; i++) for (const c of [corners[0], corners[i], corners[i + 1]]) {
      p.push(c[0], c[1], c[2]); n.push(normal[0], normal[1], normal[2]);
    }
    return [p, n];
  }
  function join(parts) { return [[].concat(...parts.map((q) => q[0])), [].concat(...parts.map((q) => q[1]))]; }
  function box(lx, ly, lz, cx, cy, cz) {  // axis-aligned in the local frame, centred at (cx, cy, cz)
    const x0 = cx - lx / 2, x1 = cx + lx / 2, y0 = cy - ly / 2, y1 = cy + ly / 2, z0 = cz - lz / 2, z1 = cz + lz / 2;
    return join([
      polygon([[x1, y0, z0], [x1, y1, z0], [x1, y1, z1], [x1, y0, z1]], [1, 0, 0]),
      polygon([[x0, y0, z0], [x0, y0, z1], [x0, y1, z1], [x0, y1, z0]], [-1, 0, 0]),
      polygon([[x0, y1, z0], [x0, y1, z1], [x1, y1, z1], [x1, y1, z0]], [0, 1, 0]),
      polygon([[x0, y0, z0], [x1, y0, z0], [x1, y0, z1], [x0, y0, z1]], [0, -1, 0]),
      polygon([[x0, y0, z1], [x1, y0, z1], [x1, y1, z1], [x0, y1, z1]], [0, 0, 1]),
      polygon([[x0, y0, z0], [x0, y1, z0], [x1, y1, z0], [x1, y0, z0]], [0, 0, -1]),
    ]);
  }
  function sphere(r, rings, segs) {
    const p = [], n = [];
    const at = (i, j) => { const th = Math.PI * i / rings, ph = 2 * Math.PI * j / segs;
      return [Math.sin(th) * Math.cos(ph), Math.sin(th) * Math.sin(ph), Math.cos(th)]; };
    for (let i = 0; i < rings; i++) for (let j = 0; j < segs; j++) {
      const a = at(i, j), b = at(i + 1, j), c = at(i + 1, j + 1), d = at(i, j + 1);
      for (const v of [a, b, c, a, c, d]) { p.push(v[0] * r, v[1] * r, v[2] * r); n.push(v[0], v[1], v[2]); }
    }
    return [p, n];
  }
  function disc(r, segs, z) {
    const corners = [];
    for (let j = 0; j < segs; j++) corners.push([r * Math.cos(2 * Math.PI * j / segs), r * Math.sin(2 * Math.PI * j / segs), z]);
    return polygon(corners, [0, 0, 1]);
  }
  function lines(pairs) { return mesh([].concat(...pairs.map(([a, b]) => a.concat(b))), null, gl.LINES); }
  function loop(corners) { return corners.map((c, i) => [c, corners[(i + 1) % corners.length]]); }
  const at = (xy, z) => [xy[0], xy[1], z];

  // The field: G.outline is the wall octagon at floor level, clockwise from blue's left.
  const X = G.sideWallX, Y = G.backWallY, H = G.ceiling, GW = G.goalHalfWidth, GH = G.goalHeight, GD = G.goalDepth;
  const outline = G.outline;
  const CC = G.cornerCut;
  const half = (s) => polygon([[-X, 0, 0], [-X, s * (Y - CC), 0], [-X + CC, s * Y, 0], [X - CC, s * Y, 0],
                               [X, s * (Y - CC), 0], [X, 0, 0]], [0, 0, 1]);
  const floors = [mesh(...half(-1)), mesh(...half(1))];
  const goalFloors = [-1, 1].map((s) => mesh(...polygon([[-GW, s * Y, 0], [GW, s * Y, 0], [GW, s * (Y + GD), 0], [-GW, s * (Y + GD), 0]], [0, 0, 1])));
  const circle = [];
  for (let j = 0; j < 64; j++) circle.push([G.centerCircle * Math.cos(Math.PI * j / 32), G.centerCircle * Math.sin(Math.PI * j / 32), 4]);
  const markings = lines(loop(outline.map((c) => at(c, 4))).concat(loop(circle),
    [[[-X, 0, 4], [X, 0, 4]]], [-1, 1].map((s) => [[-GW, s * Y, 4], [GW, s * Y, 4]])));
  const wallEdges = lines(loop(outline.map((c) => at(c, H))).concat(outline.map((c) => [at(c, 0), at(c, H)])));
  // Walls: one quad per octagon side, with its inward normal; the back walls leave the goal mouth open.
  const walls = [];
  outline.forEach((a, i) => {
    const b = outline[(i + 1) % outline.length];
    let inward = norm([-(b[1] - a[1]), b[0] - a[0], 0]);  // across the side, turned towards the centre
    if (dot(inward, [a[0] + b[0], a[1] + b[1], 0]) > 0) inward = scale(inward, -1);
    const quads = [];
    if (Math.abs(a[1]) === Y && Math.abs(b[1]) === Y) {  // a back wall, x from one corner cut to the other
      const s = Math.sign(a[1]), lo = Math.min(a[0], b[0]), hi = Math.max(a[0], b[0]);
      quads.push([[lo, s * Y, 0], [-GW, s * Y, 0], [-GW, s * Y, H], [lo, s * Y, H]]);
      quads.push([[GW, s * Y, 0], [hi, s * Y, 0], [hi, s * Y, H], [GW, s * Y, H]]);
      quads.push([[-GW, s * Y, GH], [GW, s * Y, GH], [GW, s * Y, H], [-GW, s * Y, H]]);
    } else {
      quads.push([at(a, 0), at(b, 0), at(b, H), at(a, H)]);
    }
    for (const q of quads) walls.push({ mesh: mesh(...polygon(q, inward)), normal: inward, point: q[0] });
  });
  // Goals: the net (sides, roof, back) in the team's colour, and the frame of the mouth.
  const nets = [-1, 1].map((s) => {
    const y0 = s * Y, y1 = s * (Y + GD);
    return mesh(...join([
      polygon([[-GW, y0, 0], [-GW, y1, 0], [-GW, y1, GH], [-GW, y0, GH]], [1, 0, 0]),
      polygon([[GW, y0, 0], [GW, y0, GH], [GW, y1, GH], [GW, y1, 0]], [-1, 0, 0]),
      polygon([[-GW, y0, GH], [-GW, y1, GH], [GW, y1, GH], [GW, y0, GH]], [0, 0, -1]),
      polygon([[-GW, y1, 0], [GW, y1, 0], [GW, y1, GH], [-GW, y1, GH]], [0, -s, 0]),
    ]));
  });
  const goalFrames = [-1, 1].map((s) => lines([
    [[-GW, s * Y, 0], [-GW, s * Y, GH]], [[GW, s * Y, 0], [GW, s * Y, GH]], [[-GW, s * Y, GH], [GW, s * Y, GH]],
    [[-GW, s * (Y + GD), GH], [GW, s * (Y + GD), GH]], [[-GW, s * Y, GH], [-GW, s * (Y + GD), GH]],
    [[GW, s * Y, GH], [GW, s * (Y + GD), GH]]]));
  const bigPad = mesh(...disc(G.bigPadRadius * 0.75, 24, 2)), smallPad = mesh(...disc(G.smallPadRadius * 0.55, 16, 2));
  const orb = mesh(...sphere(38, 8, 12));
  const ballMesh = mesh(...sphere(G.ballRadius, 14, 20));
  const shadow = mesh(...disc(1, 24, 0));
  // A car in its own frame (x forward, z up, origin where RocketSim puts it): the hitbox as its
  // body, a cabin, four wheels, and a flame behind it while it boosts.
  const [HL, HW, HH] = G.carHitbox, [OX, , OZ] = G.carHitboxOffset;
  const carBody = mesh(...box(HL, HW, HH, OX, 0, OZ));
  const carCabin = mesh(...box(HL * 0.45, HW * 0.8, HH * 0.55, OX - HL * 0.12, 0, OZ + HH * 0.72));
  const carNose = mesh(...box(HL * 0.08, HW * 0.7, HH * 0.35, OX + HL * 0.5, 0, OZ + HH * 0.05));
  const wheels = mesh(...join([[51.25, 25.9, -4.5, 25], [51.25, -25.9, -4.5, 25], [-33.75, 29.5, -2, 30],
    [-33.75, -29.5, -2, 30]].map(([x, y, z, d]) => box(d, 14, d, x, y, z))));
  const flame = mesh(...box(60, 26, 22, OX - HL / 2 - 30, 0, OZ));

  // ------------------------------------------------------------------ colours
  function rgba(hex, alpha) {
    const v = parseInt(hex.slice(1), 16);
    return [(v >> 16 & 255) / 255, (v >> 8 & 255) / 255, (v & 255) / 255, alpha === undefined ? 1 : alpha];
  }
  const TEAM = G.teamColors.map((c) => rgba(c)), TEAM_NET = G.teamColors.map((c) => rgba(c, 0.28));
  const TEAM_DARK = TEAM.map((c) => [c[0] * 0.35, c[1] * 0.35, c[2] * 0.35, 1]);
  const COLORS = {
    floor: [[0.16, 0.30, 0.21, 1], [0.20, 0.31, 0.19, 1]], lines: [1, 1, 1, 0.55], wall: [0.72, 0.80, 0.92, 0.10],
    wallEdge: [0.85, 0.9, 1, 0.35], padUp: [1, 0.78, 0.1, 1], padUpSmall: [1, 0.86, 0.4, 1], padDown: [0.13, 0.14, 0.13, 1],
    ball: [0.93, 0.93, 0.93, 1], shadow: [0, 0, 0, 0.38], wheel: [0.08, 0.08, 0.08, 1], flame: [1, 0.55, 0.1, 1],
    nose: [0.95, 0.95, 0.95, 1],
  };

  // ------------------------------------------------------------------ camera
  // "stadium": orbit the field; "ball": orbit the ball; a car's index: behind that car, facing the
  // ball (the "ball cam" players use). Drag turns an orbit, the wheel zooms it, a double click resets.
  const ORBIT_DEFAULT = { yaw: Math.PI, pitch: 0.62, stadium: 10500, ball: 2200 };
  const cam = { mode: "stadium", yaw: ORBIT_DEFAULT.yaw, pitch: ORBIT_DEFAULT.pitch, dist: ORBIT_DEFAULT.stadium };
  const select = document.getElementById("camera");
  const choices = [["stadium", "Camera: stadium"], ["ball", "Camera: follow the ball"]];
  for (let i = 0; i < D.cars; i++) choices.push([String(i), "Camera: behind " + D.labels[i] + " (" + D.names[i] + ")"]);
  for (const [value, text] of choices) {
    const o = document.createElement("option"); o.value = value; o.textContent = text; select.appendChild(o);
  }
  function setCamera(mode) {
    cam.mode = String(mode);
    select.value = cam.mode;
    cam.yaw = ORBIT_DEFAULT.yaw; cam.pitch = ORBIT_DEFAULT.pitch;
    cam.dist = cam.mode === "ball" ? ORBIT_DEFAULT.ball : ORBIT_DEFAULT.stadium;
    env.redraw();
  }
  select.onchange = () => setCamera(select.value);
  const orbiting = () => cam.mode === "stadium" || cam.mode === "ball";
  let drag = null;
  canvas.addEventListener("pointerdown", (e) => { if (orbiting()) { drag = [e.clientX, e.clientY]; canvas.setPointerCapture(e.pointerId); } });
  canvas.addEventListener("pointermove", (e) => {
    if (!drag) return;
    cam.yaw -= (e.clientX - drag[0]) * 0.006;
    cam.pitch = Math.min(1.5, Math.max(0.04, cam.pitch + (e.clientY - drag[1]) * 0.005));
    drag = [e.clientX, e.clientY];
    env.redraw();
  });
  canvas.addEventListener("pointerup", () => { drag = null; });
  canvas.addEventListener("wheel", (e) => {
    if (!orbiting()) return;
    e.preventDefault();
    cam.dist = Math.min(30000, Math.max(500, cam.dist * Math.exp(e.deltaY * 0.001)));
    env.redraw();
  }, { passive: false });
  canvas.addEventListener("dblclick", () => setCamera(cam.mode));

  function ballAt(f) { const b = env.ball(f); return [b.x, b.y, b.z]; }
  // Where the camera is and what it looks at, in the game frame: a function of the frame alone,
  // so scrubbing to a moment always shows the same picture.
  function camera(f) {
    if (orbiting()) {
      const target = cam.mode === "ball" ? ballAt(f) : [0, 0, 0];
      const cp = Math.cos(cam.pitch);
      return { eye: add(target, scale([cp * Math.cos(cam.yaw), cp * Math.sin(cam.yaw), Math.sin(cam.pitch)], cam.dist)),
               target: target, fov: 50 };
    }
    const i = parseInt(cam.mode, 10), c = env.car(i, f), pos = [c.x, c.y, c.z];
    // the direction from the car to the ball, averaged over the last half second so it does not spin
    let dir = [0, 0, 0];
    for (let k = 0; k < Math.max(1, Math.round(0.5 / D.dt)); k++) {
      const g = Math.max(0, f - k), ck = env.car(i, g);
      dir = add(dir, norm(sub(ballAt(g), [ck.x, ck.y, ck.z])));
    }
    dir = norm([dir[0], dir[1], Math.min(0.45, Math.max(-0.25, norm(dir)[2]))]);
    if (Math.hypot(dir[0], dir[1]) < 1e-3) dir = norm([c.fwd[0], c.fwd[1], 0]);
    return { eye: add(sub(pos, scale(dir, 620)), [0, 0, 230]), target: add(pos, add(scale(dir, 900), [0, 0, 60])), fov: 70 };
  }

  // ------------------------------------------------------------------ drawing
  let width = 0, height = 0, viewProj = IDENTITY;
  const labels = [];
  for (let i = 0; i < D.cars; i++) {
    const el = document.createElement("div"); el.className = "carlabel";
    el.innerHTML = '<span class="' + ["blue", "orange"][D.teams[i]] + '">' + D.labels[i] + '</span><div class="bar"><div></div></div>';
    stage.appendChild(el); labels.push(el);
  }

  function layout(w) {
    width = w; height = Math.max(240, Math.round(w * 9 / 16));
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * ratio); canvas.height = Math.round(height * ratio);
    canvas.style.height = height + "px";
    gl.viewport(0, 0, canvas.width, canvas.height);
  }

  function put(m, model, color, lit) {
    gl.bindBuffer(gl.ARRAY_BUFFER, m.pb); gl.vertexAttribPointer(aPos, 3, gl.FLOAT, false, 0, 0);
    gl.bindBuffer(gl.ARRAY_BUFFER, m.nb); gl.vertexAttribPointer(aNormal, 3, gl.FLOAT, false, 0, 0);
    gl.uniformMatrix4fv(uModel, false, model);
    gl.uniform4fv(uColor, color);
    gl.uniform1f(uLit, lit ? 1 : 0);
    gl.drawArrays(m.mode, 0, m.count);
  }
  const moved = (x, y, z) => placement([1, 0, 0], [0, 1, 0], [0, 0, 1], [x, y, z]);

  function project(p) {
    const v = viewProj, x = p[0], y = p[1], z = p[2];
    const w = v[3] * x + v[7] * y + v[11] * z + v[15];
    if (w <= 1e-6) return null;
    const nx = (v[0] * x + v[4] * y + v[8] * z + v[12]) / w, ny = (v[1] * x + v[5] * y + v[9] * z + v[13]) / w;
    return [(nx + 1) / 2 * width, (1 - ny) / 2 * height];
  }

  function draw(f) {
    const view = camera(f), mirror = (p) => [-p[0], p[1], p[2]];
    viewProj = multiply(multiply(perspective(view.fov * Math.PI / 180, width / height, 20, 60000),
                                 lookAt(mirror(view.eye), mirror(view.target), [0, 0, 1])), MIRROR);
    gl.uniformMatrix4fv(uViewProj, false, viewProj);
    gl.clearColor(0.055, 0.067, 0.09, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST); gl.depthMask(true); gl.disable(gl.BLEND); gl.disable(gl.CULL_FACE);
    // opaque: floor, pads, cars, ball
    floors.forEach((m, k) => put(m, IDENTITY, COLORS.floor[k], true));
    goalFloors.forEach((m, k) => put(m, IDENTITY, TEAM_DARK[k], true));
    G.pads.forEach(([x, y, big], p) => {
      const up = env.padUp(p, f);
      put(big ? bigPad : smallPad, moved(x, y, 0), up ? (big ? COLORS.padUp : COLORS.padUpSmall) : COLORS.padDown, false);
      if (big && up) put(orb, moved(x, y, 95), COLORS.padUp, true);
    });
    for (let i = 0; i < D.cars; i++) {
      const c = env.car(i, f);
      if (c.demolished) continue;
      const model = placement(c.fwd, cross(c.up, c.fwd), c.up, [c.x, c.y, c.z]);
      put(carBody, model, TEAM[c.team], true);
      put(carCabin, model, TEAM_DARK[c.team], true);
      put(carNose, model, COLORS.nose, true);
      put(wheels, model, COLORS.wheel, true);
      if (c.boosting) put(flame, model, COLORS.flame, false);
    }
    const b = ballAt(f);
    put(ballMesh, moved(b[0], b[1], b[2]), COLORS.ball, true);
    // see-through: markings, the ball's shadow, walls facing away from the camera, nets
    gl.enable(gl.BLEND); gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA); gl.depthMask(false);
    put(markings, IDENTITY, COLORS.lines, false);
    const r = Math.max(20, G.ballRadius * (1 - Math.min(0.7, (b[2] - G.ballRadius) / H)));
    put(shadow, placement([r, 0, 0], [0, r, 0], [0, 0, 1], [b[0], b[1], 1.5]), COLORS.shadow, false);
    for (const w of walls) if (dot(sub(view.eye, w.point), w.normal) > 0) put(w.mesh, IDENTITY, COLORS.wall, true);
    put(wallEdges, IDENTITY, COLORS.wallEdge, false);
    nets.forEach((m, k) => put(m, IDENTITY, TEAM_NET[k], true));
    goalFrames.forEach((m, k) => put(m, IDENTITY, TEAM[k], false));
    gl.depthMask(true);
    // names and boost over the cars
    for (let i = 0; i < D.cars; i++) {
      const c = env.car(i, f), p = c.demolished ? null : project([c.x, c.y, c.z + 110]);
      const el = labels[i];
      if (!p || p[0] < 0 || p[0] > width || p[1] < 0 || p[1] > height) { el.style.display = "none"; continue; }
      el.style.display = "block"; el.style.left = p[0] + "px"; el.style.top = p[1] + "px";
      el.lastChild.firstChild.style.width = c.boost + "%";
    }
  }

  return { layout: layout, draw: draw, project: project, setCamera: setCamera };
}
