#!/usr/bin/env bash
# Checks the offline trajectory viewer (`nonsmooth simulate --html`) in headless Chromium
# (Debian `chromium`, installed with apt-get when missing): the page runs offline without
# console errors, window.nonsmoothViewer scrubs, Play starts playing, and the sliding box
# is drawn where the API says, moving right (+x) at a constant height, with its contact
# points and their force arrows (hidden by the checkbox; the forces drawn carry the box's
# weight). Then the comparison page of `--stepper all` on the same
# model: no console error with the arrows on, every stepper that ran (comparison.json) has
# its box drawn, and force arrows are drawn. Screenshots are taken.
# Usage: bash scripts/viewer_check.sh [OUT_DIR]   (default: target/viewer-check)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-target/viewer-check}"

source scripts/chromium.sh
chromium_find

# Exactly the build of `cargo test --workspace` (same profile and features, so nothing is
# rebuilt after the test suite); it includes the CLI binary target/debug/nonsmooth.
cargo test --quiet --workspace --no-run --features nonsmooth-solvers/sdp
rm -rf "$OUT" && mkdir -p "$OUT"
target/debug/nonsmooth simulate examples/sliding_box.toml --html --duration 0.5 \
    --stepper anitescu-potra --quiet --out "$OUT/run"
VIEWER="$(cd "$OUT/run" && pwd)/viewer.html"
[ -s "$VIEWER" ] || { echo "viewer_check: $VIEWER was not written" >&2; exit 1; }

# A copy of the page with a probe that scrubs and records what was drawn into the DOM.
python3 - "$VIEWER" "$OUT/probe.html" <<'PY'
import sys
src = open(sys.argv[1], encoding="utf-8").read()
probe = """<script>
(function () {
  var v = window.nonsmoothViewer, out = [];
  var ctx = document.getElementById("scene").getContext("2d");
  var t1 = v.timeRange()[1];
  [0, 0.5 * t1, t1].forEach(function (t) {
    v.setTime(t);
    var p = v.bodyScreenPosition(0);
    var px = ctx.getImageData(Math.round(p.x), Math.round(p.y), 1, 1).data;
    out.push([t, p.x, p.y, px[0], px[1], px[2], px[3]].join(","));
  });
  document.body.setAttribute("data-probe", out.join(";"));
  v.setTime(t1);
  document.body.setAttribute("data-contacts", String(v.contacts(0).length));
  // Force arrows in the middle of the run: drawn, then hidden by the checkbox.
  v.setTime(0.5 * t1);
  var on = v.drawnForces();
  v.setForces(false);
  var off = v.drawnForces(), box = document.getElementById("forces").checked;
  v.setForces(true);
  var up = 0;
  v.contacts(0).forEach(function (c) { if (c.force) up += c.force[2]; });
  document.body.setAttribute("data-forces", [on, off, box, v.forceScale().newtons, up].join(","));
  // Play at 0.25×: the button turns into Pause (how far the time gets depends on how often
  // headless Chromium draws animation frames, so it is reported, not checked).
  v.setTime(0);
  document.getElementById("speed").value = "0.25";
  var play = document.getElementById("play");
  play.click();
  document.body.setAttribute("data-play-label", play.textContent);
  setTimeout(function () { document.body.setAttribute("data-played", String(v.time())); }, 800);
})();
</script>
</body>"""
assert src.count("</body>") == 1
open(sys.argv[2], "w", encoding="utf-8").write(src.replace("</body>", probe))
PY
PROBE="$(cd "$OUT" && pwd)/probe.html"

chromium_render "$PROBE" "$VIEWER" "$OUT" 1100,900 3000

python3 - "$OUT" <<'PY'
import pathlib, re, sys
out = pathlib.Path(sys.argv[1])
dom = (out / "dom.html").read_text(encoding="utf-8", errors="replace")
log = (out / "chromium.log").read_text(encoding="utf-8", errors="replace")
errors = []
console = [l for l in log.splitlines()
           if ("CONSOLE" in l or "Uncaught" in l) and "willReadFrequently" not in l]  # the probe's readback
if console:
    errors.append("console messages:\n  " + "\n  ".join(console))
if 'data-viewer-ready="1"' not in dom:
    errors.append("the viewer script did not finish (no data-viewer-ready)")
m = re.search(r'data-probe="([^"]*)"', dom)
if not m:
    errors.append("the probe did not run")
else:
    rows = [[float(x) for x in r.split(",")] for r in m.group(1).split(";")]
    for t, x, y, r, g, b, a in rows:
        print(f"t = {t:.3f} s: box origin drawn at ({x:.1f}, {y:.1f}), pixel rgba {r:.0f},{g:.0f},{b:.0f},{a:.0f}")
        if not (0 <= x <= 800 and 0 <= y <= 500):
            errors.append(f"box outside the canvas at t = {t}: ({x}, {y})")
        if a == 0 or (r, g, b) == (255, 255, 255):
            errors.append(f"nothing drawn at the box origin at t = {t}")
    xs = [r[1] for r in rows]
    ys = [r[2] for r in rows]
    if not (xs[0] < xs[1] < xs[2]):
        errors.append(f"the box does not move right: x = {xs}")
    if max(ys) - min(ys) > 2:
        errors.append(f"the box changes height: y = {ys}")
m = re.search(r'data-contacts="([^"]*)"', dom)
if not m or m.group(1) != "4":
    errors.append(f"expected the box's 4 contact points at the end (got {m.group(1) if m else 'none'})")
m = re.search(r'data-forces="([^"]*)"', dom)
if not m:
    errors.append("the force probe did not run")
else:
    on, off, box, newtons, up = m.group(1).split(",")
    print(f"force arrows: {on} drawn, {off} with the checkbox off, scale {float(newtons):.3g} N, "
          f"vertical sum {float(up):.3f} N")
    # The LCP may share the weight among 2 to 4 corners (the split is not unique).
    if not 2 <= int(on) <= 4:
        errors.append(f"expected 2 to 4 force arrows in the middle of the run, got {on}")
    if int(off) != 0 or box != "false":
        errors.append(f"the checkbox did not hide the arrows ({off} drawn, checked = {box})")
    if abs(float(up) - 2.0 * 9.81) > 0.5:
        errors.append(f"the forces drawn carry {up} N upwards, not the weight 19.62 N")
    if not (1.0 < float(newtons) < 25.0):
        errors.append(f"force scale {newtons} N is far from the box's contact forces")
m = re.search(r'data-play-label="([^"]*)"', dom)
if not m or m.group(1) != "Pause":
    errors.append(f"Play did not start playing (button: {m.group(1) if m else 'not found'})")
m = re.search(r'data-played="([^"]*)"', dom)
if m:
    print(f"after 0.8 s of play at 0.25×: t = {float(m.group(1)):.3f} s (not checked)")
if not (out / "screenshot.png").exists():
    errors.append("no screenshot")
if errors:
    print("viewer_check: FAILED\n" + "\n".join(errors), file=sys.stderr)
    sys.exit(1)
print(f"viewer_check: single run ok (screenshot: {out / 'screenshot.png'})")
PY

# The comparison page: every stepper on the sliding box, overlaid.
target/debug/nonsmooth simulate examples/sliding_box.toml --stepper all --html --duration 0.5 \
    --quiet --out "$OUT/all"
ALL="$(cd "$OUT/all" && pwd)/viewer.html"
[ -s "$ALL" ] || { echo "viewer_check: $ALL was not written" >&2; exit 1; }
mkdir -p "$OUT/all-check"
python3 - "$ALL" "$OUT/all-check/probe.html" <<'PY'
import sys
src = open(sys.argv[1], encoding="utf-8").read()
probe = """<script>
(function () {
  var v = window.nonsmoothViewer, out = [];
  var ctx = document.getElementById("scene").getContext("2d");
  var range = v.timeRange();
  v.setTime(0.5 * (range[0] + range[1]));
  v.drawnShapes().forEach(function (d) {
    var px = ctx.getImageData(Math.round(d.x), Math.round(d.y), 1, 1).data;
    out.push([v.runs()[d.run], d.shape, d.type, d.x, d.y, px[3]].join(","));
  });
  document.body.setAttribute("data-runs", v.runs().join(","));
  document.body.setAttribute("data-drawn", out.join(";"));
  document.body.setAttribute("data-forces", String(v.drawnForces()));
})();
</script>
</body>"""
assert src.count("</body>") == 1
open(sys.argv[2], "w", encoding="utf-8").write(src.replace("</body>", probe))
PY
chromium_render "$(cd "$OUT/all-check" && pwd)/probe.html" "$ALL" "$OUT/all-check" 1100,900 3000

python3 - "$OUT/all-check" "$OUT/all/comparison.json" <<'PY'
import json, pathlib, re, sys
out = pathlib.Path(sys.argv[1])
comparison = json.loads(pathlib.Path(sys.argv[2]).read_text())
ran = [r["stepper"] for r in comparison["runs"] if r["status"] in ("completed", "failed")]
dom = (out / "dom.html").read_text(encoding="utf-8", errors="replace")
log = (out / "chromium.log").read_text(encoding="utf-8", errors="replace")
errors = []
console = [l for l in log.splitlines()
           if ("CONSOLE" in l or "Uncaught" in l) and "willReadFrequently" not in l]
if console:
    errors.append("console messages:\n  " + "\n  ".join(console))
if 'data-viewer-ready="1"' not in dom:
    errors.append("the viewer script did not finish (no data-viewer-ready)")
m = re.search(r'data-runs="([^"]*)"', dom)
runs = m.group(1).split(",") if m else []
if runs != ran:
    errors.append(f"the page shows the runs {runs}, comparison.json has {ran}")
m = re.search(r'data-drawn="([^"]*)"', dom)
drawn = [r.split(",") for r in m.group(1).split(";")] if m and m.group(1) else []
for name in ran:
    boxes = [d for d in drawn if d[0] == name and d[1] == "box_shape" and d[2] == "box"]
    if not boxes:
        errors.append(f"{name}: no box drawn")
        continue
    x, y, alpha = float(boxes[0][3]), float(boxes[0][4]), float(boxes[0][5])
    print(f"{name}: box drawn at ({x:.1f}, {y:.1f})")
    if not (0 <= x <= 800 and 0 <= y <= 500):
        errors.append(f"{name}: box outside the canvas: ({x}, {y})")
    if alpha == 0:
        errors.append(f"{name}: nothing drawn at its box origin")
if len(ran) < 2:
    errors.append(f"expected several steppers to run the sliding box, got {ran}")
m = re.search(r'data-forces="([^"]*)"', dom)
forces = int(m.group(1)) if m else 0
print(f"force arrows drawn at mid-run: {forces}")
if forces == 0:
    errors.append("no force arrows drawn (drumwright, anitescu-potra and qp-max-dissipation report them)")
if not (out / "screenshot.png").exists():
    errors.append("no screenshot")
if errors:
    print("viewer_check (--stepper all): FAILED\n" + "\n".join(errors), file=sys.stderr)
    sys.exit(1)
print(f"viewer_check: --stepper all ok, {len(ran)} steppers drawn (screenshot: {out / 'screenshot.png'})")
PY
