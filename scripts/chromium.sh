# Headless Chromium for the page checks (report_check.sh, viewer_check.sh); source it.
# Debian's `chromium` is installed with apt-get when missing.

# Sets CHROMIUM to the browser binary.
chromium_find() {
    CHROMIUM="$(command -v chromium || command -v chromium-browser || true)"
    if [ -z "$CHROMIUM" ]; then
        local sudo=""
        [ "$(id -u)" -ne 0 ] && sudo="sudo"
        $sudo apt-get update -qq && $sudo apt-get install -y -qq chromium >/dev/null
        CHROMIUM="$(command -v chromium)"
    fi
}

# chromium_render DOM_PAGE SHOT_PAGE OUT WIDTH,HEIGHT BUDGET_MS
# Loads DOM_PAGE and writes its DOM after the scripts ran to OUT/dom.html (console messages
# in OUT/chromium.log), then a screenshot of SHOT_PAGE to OUT/screenshot.png.
chromium_render() {
    local dom_page="$1" shot_page="$2" out="$3" size="$4" budget="$5"
    local flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run
                 --disable-extensions --disable-background-networking
                 --virtual-time-budget="$budget" --user-data-dir="$(mktemp -d)")
    "$CHROMIUM" "${flags[@]}" --enable-logging=stderr --v=0 --dump-dom "file://$dom_page" \
        >"$out/dom.html" 2>"$out/chromium.log"
    "$CHROMIUM" "${flags[@]}" --window-size="$size" --screenshot="$out/screenshot.png" \
        "file://$shot_page" >/dev/null 2>>"$out/chromium.log"
}
