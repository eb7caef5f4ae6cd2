// The replay player's 2D view: the soccar field from above on a canvas, to scale (dashboard/field.py
// gives the geometry, env.G). A View maps field (x, y) to canvas pixels; drawField paints the static
// field once (into an offscreen canvas), drawPads/drawBall/drawCar paint one frame's objects over it,
// and createView is the player's view contract (dashboard/player.js): layout(width), draw(frame).

function makeView(G, width) {
  const margin = 150;  // uu around the field
  const s = width / (2 * (G.halfY + margin));
  const height = Math.round(2 * (G.halfX + margin) * s);
  return {
    s: s, width: width, height: height,
    // +y right, +x up (view from above in the left-handed game frame)
    px: (x, y) => [(y + G.halfY + margin) * s, (G.halfX + margin - x) * s],
    // canvas angle of a heading given as yaw in the field frame
    angle: (yaw) => Math.atan2(-Math.cos(yaw), Math.sin(yaw)),
  };
}

function drawField(ctx, G, V) {
  ctx.fillStyle = "#1b2a1f";
  ctx.fillRect(0, 0, V.width, V.height);
  // goals (behind the back walls)
  for (const g of G.goals) {
    const [ax, ay] = V.px(g.x1, g.y0), [bx, by] = V.px(g.x0, g.y1);
    ctx.fillStyle = G.teamColors[g.team] + "55";
    ctx.strokeStyle = G.teamColors[g.team];
    ctx.lineWidth = 2;
    const x0 = Math.min(ax, bx), y0 = Math.min(ay, by);
    ctx.fillRect(x0, y0, Math.abs(bx - ax), Math.abs(by - ay));
    ctx.strokeRect(x0, y0, Math.abs(bx - ax), Math.abs(by - ay));
  }
  // floor inside the walls, tinted by half
  ctx.save();
  ctx.beginPath();
  G.outline.forEach(([x, y], i) => { const [cx, cy] = V.px(x, y); i ? ctx.lineTo(cx, cy) : ctx.moveTo(cx, cy); });
  ctx.closePath();
  ctx.clip();
  const [midX] = V.px(0, 0);
  ctx.fillStyle = "#24482f"; ctx.fillRect(0, 0, midX, V.height);
  ctx.fillStyle = "#2c4a2a"; ctx.fillRect(midX, 0, V.width - midX, V.height);
  ctx.restore();
  ctx.beginPath();
  G.outline.forEach(([x, y], i) => { const [cx, cy] = V.px(x, y); i ? ctx.lineTo(cx, cy) : ctx.moveTo(cx, cy); });
  ctx.closePath();
  ctx.strokeStyle = "#e8e8e8"; ctx.lineWidth = 3; ctx.stroke();
  // halfway line and kickoff circle
  ctx.strokeStyle = "rgba(255,255,255,0.45)"; ctx.lineWidth = 1.5;
  const [lx0, ly0] = V.px(G.halfX, 0), [lx1, ly1] = V.px(-G.halfX, 0);
  ctx.beginPath(); ctx.moveTo(lx0, ly0); ctx.lineTo(lx1, ly1); ctx.stroke();
  const [cx, cy] = V.px(0, 0);
  ctx.beginPath(); ctx.arc(cx, cy, G.centerCircle * V.s, 0, 2 * Math.PI); ctx.stroke();
}

// The boost pads at frame f: lit while up, dark while taken (env.padUp: dashboard/boost_pads.py's
// inferred downtimes), so they are drawn every frame over the static field.
function drawPads(ctx, G, V, env, f) {
  G.pads.forEach(([x, y, big], p) => {
    const [px, py] = V.px(x, y);
    ctx.beginPath();
    ctx.arc(px, py, Math.max((big ? G.bigPadRadius * 0.6 : G.smallPadRadius * 0.45) * V.s, big ? 5 : 2.5), 0, 2 * Math.PI);
    ctx.fillStyle = !env.padUp(p, f) ? "rgba(28,28,28,0.9)" : big ? "rgba(255,196,0,0.85)" : "rgba(255,214,90,0.55)";
    ctx.fill();
  });
}

function drawBall(ctx, G, V, x, y, z, trail) {
  if (trail && trail.length > 1) {
    ctx.beginPath();
    trail.forEach(([tx, ty], i) => { const [px, py] = V.px(tx, ty); i ? ctx.lineTo(px, py) : ctx.moveTo(px, py); });
    ctx.strokeStyle = "rgba(255,255,255,0.35)"; ctx.lineWidth = 2; ctx.stroke();
  }
  const [px, py] = V.px(x, y);
  const r = Math.max(G.ballRadius * V.s, G.minBallPx / 2);
  const lift = Math.max(0, z - G.ballRadius) / G.ceiling;  // 0 on the floor, 1 at the ceiling
  ctx.beginPath(); ctx.arc(px, py, r, 0, 2 * Math.PI); ctx.fillStyle = "rgba(0,0,0,0.35)"; ctx.fill();
  ctx.beginPath(); ctx.arc(px, py - lift * 10, r * (1 + 0.8 * lift), 0, 2 * Math.PI);
  ctx.fillStyle = "#f5f5f5"; ctx.fill(); ctx.strokeStyle = "#222"; ctx.lineWidth = 1; ctx.stroke();
}

function drawCar(ctx, G, V, car) {
  const [px, py] = V.px(car.x, car.y);
  const L = G.carLength * V.s, W = G.carWidth * V.s;
  ctx.save();
  ctx.translate(px, py);
  if (car.demolished) {
    ctx.strokeStyle = "rgba(200,200,200,0.7)"; ctx.lineWidth = 2;
    ctx.beginPath(); ctx.moveTo(-L / 2, -L / 2); ctx.lineTo(L / 2, L / 2);
    ctx.moveTo(L / 2, -L / 2); ctx.lineTo(-L / 2, L / 2); ctx.stroke();
    ctx.restore();
    return;
  }
  // boost: a ring around the car, full circle = 100
  ctx.beginPath();
  ctx.arc(0, 0, L * 0.85, -Math.PI / 2, -Math.PI / 2 + 2 * Math.PI * car.boost / 100);
  ctx.strokeStyle = "#ffd000"; ctx.lineWidth = 2.5; ctx.stroke();
  ctx.rotate(V.angle(car.yaw));
  if (!car.onGround) {  // airborne: a shadow under a lifted body
    ctx.fillStyle = "rgba(0,0,0,0.35)"; ctx.fillRect(-L / 2 + 2, -W / 2 + 2, L, W);
  }
  ctx.fillStyle = G.teamColors[car.team];
  ctx.strokeStyle = car.onGround ? "#111" : "#fff";
  ctx.lineWidth = 1.2;
  ctx.fillRect(-L / 2, -W / 2, L, W);
  ctx.strokeRect(-L / 2, -W / 2, L, W);
  // heading: a white nose
  ctx.beginPath(); ctx.moveTo(L / 2 + 4, 0); ctx.lineTo(L / 2 - W * 0.45, -W * 0.4); ctx.lineTo(L / 2 - W * 0.45, W * 0.4);
  ctx.closePath(); ctx.fillStyle = "#fff"; ctx.fill();
  ctx.restore();
  ctx.fillStyle = "#fff"; ctx.font = "11px sans-serif"; ctx.textAlign = "center";
  ctx.fillText(car.label, px, py - L * 0.95 - 2);
}

function createView(canvas, env) {
  const G = env.G, ctx = canvas.getContext("2d");
  let V = null, background = null;
  function layout(width) {
    V = makeView(G, width);
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(V.width * ratio); canvas.height = Math.round(V.height * ratio);
    canvas.style.height = V.height + "px";
    background = document.createElement("canvas");
    background.width = canvas.width; background.height = canvas.height;
    const bctx = background.getContext("2d"); bctx.scale(ratio, ratio);
    drawField(bctx, G, V);
  }
  function draw(f) {
    const ratio = window.devicePixelRatio || 1;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(background, 0, 0);
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    drawPads(ctx, G, V, env, f);
    const trail = [];
    for (let k = Math.max(0, f - Math.round(1.5 / env.D.dt)); k <= f; k++) { const b = env.ball(k); trail.push([b.x, b.y]); }
    for (let i = 0; i < env.D.cars; i++) drawCar(ctx, G, V, env.car(i, f));
    const b = env.ball(f);
    drawBall(ctx, G, V, b.x, b.y, b.z, trail);
  }
  return { layout: layout, draw: draw };
}
