#!/usr/bin/env bash
# Renders a quick reproduction report and checks it in headless Chromium (Debian `chromium`,
# installed with apt-get when missing): the page loads offline without console errors, every
# figure renders (inline SVG; no broken <img>), and a screenshot is taken. Then every
# embedded player (trajectory viewer page) on its own: no console error while it is scrubbed
# with the force arrows on, and arrows drawn where the page carries contact forces.
# Usage: bash scripts/report_check.sh [OUT_DIR] [EXPERIMENT_IDS...]
# (default: target/report-check with one quick experiment per paper; pass `--all` as the only
#  id to render the full quick report).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-target/report-check}"
shift || true
IDS=("$@")
if [ ${#IDS[@]} -eq 0 ]; then
    IDS=(foundation-free-fall drumwright-smd drumwright-incline impact-disks id-statics)
fi

source scripts/chromium.sh
chromium_find

# Exactly the build of `cargo test --workspace` (same profile and features, so nothing is
# rebuilt after the test suite); it includes the CLI binary target/debug/nonsmooth.
cargo test --quiet --workspace --no-run --features nonsmooth-solvers/sdp
rm -rf "$OUT" && mkdir -p "$OUT"
# Exit code 1 means a check of an experiment failed; the page must still render.
target/debug/nonsmooth reproduce --quick --quiet --out "$OUT" "${IDS[@]}" || [ $? -eq 1 ]
REPORT="$(cd "$OUT" && pwd)/report.html"
[ -s "$REPORT" ] || { echo "report_check: $REPORT was not written" >&2; exit 1; }

chromium_render "$REPORT" "$REPORT" "$OUT" 1200,4000 5000

python3 - "$OUT" <<'PY'
import pathlib, re, struct, sys
out = pathlib.Path(sys.argv[1])
dom = (out / "dom.html").read_text(encoding="utf-8", errors="replace")
log = (out / "chromium.log").read_text(encoding="utf-8", errors="replace")
src = (out / "report.html").read_text(encoding="utf-8")
errors = []
console = [l for l in log.splitlines() if "CONSOLE" in l or "Uncaught" in l]
if console:
    errors.append("console messages:\n  " + "\n  ".join(console))
m = re.search(r'data-broken-images="(\d+)"', dom)
if not m:
    errors.append("the page's load handler did not run (no data-broken-images attribute)")
elif m.group(1) != "0":
    errors.append(f"{m.group(1)} broken image(s)")
figures = src.count("<figure>")
svgs = len(re.findall(r"<figure><svg", src))
if figures == 0:
    errors.append("the report has no figures")
if svgs != figures:
    errors.append(f"only {svgs} of {figures} figures are inline SVG")
players = re.findall(r'<figure class="player"><iframe src="([^"]+)"', src)
for p in players:
    if not (out / p).is_file():
        errors.append(f"player {p} is missing")
if re.search(r'(src|href)="https?://', src):
    errors.append("the report references the network (must open offline)")
if 'id="summary"' not in dom:
    errors.append("no summary table in the rendered page")
png = (out / "screenshot.png").read_bytes()
if png[:8] != b"\x89PNG\r\n\x1a\n":
    errors.append("screenshot is not a PNG")
else:
    w, h = struct.unpack(">II", png[16:24])
    if (w, h) != (1200, 4000):
        errors.append(f"screenshot has size {w}x{h}")
if errors:
    print("report_check: FAILED\n" + "\n".join(errors), file=sys.stderr)
    sys.exit(1)
print(f"report_check: ok — {figures} inline SVG figures, {len(players)} player(s), no console errors, "
      f"screenshot {out / 'screenshot.png'}")
PY

# Every player on its own, scrubbed through with the force arrows on.
PLAYERS_DIR="$OUT/player-check"
mkdir -p "$PLAYERS_DIR"
python3 - "$OUT" "$PLAYERS_DIR" <<'PY'
import pathlib, re, sys
out, check = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
src = (out / "report.html").read_text(encoding="utf-8")
probe = """<script>
(function () {
  var v = window.nonsmoothViewer, r = v.timeRange(), most = 0;
  v.setForces(true);
  for (var i = 0; i <= 20; i++) {
    v.setTime(r[0] + (r[1] - r[0]) * i / 20);
    most = Math.max(most, v.drawnForces());
  }
  var forces = v.data.runs.some(function (run) {
    return (run.contacts || []).some(function (f) { return f.some(function (c) { return !!c.force; }); });
  });
  document.body.setAttribute("data-forces", (forces ? "1" : "0") + "," + most);
})();
</script>
</body>"""
for k, p in enumerate(re.findall(r'<figure class="player"><iframe src="([^"]+)"', src)):
    page = (out / p).read_text(encoding="utf-8")
    assert page.count("</body>") == 1, p
    (check / f"{k}.html").write_text(page.replace("</body>", probe), encoding="utf-8")
    (check / f"{k}.name").write_text(p, encoding="utf-8")
PY
for probe in "$PLAYERS_DIR"/*.html; do
    [ -e "$probe" ] || continue
    dir="${probe%.html}"
    mkdir -p "$dir"
    chromium_render "$(cd "$(dirname "$probe")" && pwd)/$(basename "$probe")" \
        "$(cd "$(dirname "$probe")" && pwd)/$(basename "$probe")" "$dir" 1100,1000 3000
done
python3 - "$PLAYERS_DIR" <<'PY'
import pathlib, re, sys
check = pathlib.Path(sys.argv[1])
errors = []
for name_file in sorted(check.glob("*.name")):
    name = name_file.read_text(encoding="utf-8")
    d = check / name_file.stem
    dom = (d / "dom.html").read_text(encoding="utf-8", errors="replace")
    log = (d / "chromium.log").read_text(encoding="utf-8", errors="replace")
    console = [l for l in log.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    if console:
        errors.append(f"{name}: console messages:\n  " + "\n  ".join(console))
    if 'data-viewer-ready="1"' not in dom:
        errors.append(f"{name}: the viewer script did not finish")
    m = re.search(r'data-forces="(\d),(\d+)"', dom)
    if not m:
        errors.append(f"{name}: the probe did not run")
        continue
    has, most = m.group(1) == "1", int(m.group(2))
    print(f"{name}: {'contact forces, up to ' + str(most) + ' arrows drawn' if has else 'no contact forces'}")
    if has and most == 0:
        errors.append(f"{name}: the page carries contact forces but no arrow was drawn")
if errors:
    print("report_check (players): FAILED\n" + "\n".join(errors), file=sys.stderr)
    sys.exit(1)
print("report_check: players ok")
PY
