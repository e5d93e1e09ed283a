#!/bin/sh
# The window under a real X server, driven as a person drives it: Xvfb with the openbox window
# manager, keys sent with xdotool (XTEST, real input events), at 1280x720. Checks the first two
# defects of the hands-on trial (docs/workbench.md):
#   1. Step (F10) from idle trains exactly one batch, three times in a row, on 3 devices: each
#      run, stopped with Ctrl+., writes a device trace of exactly one step.
#   2. Examples open unmodified: Ctrl+Q closes an untouched example at once (no "Unsaved
#      changes" dialog), and Ctrl+S on an example opens Save As instead of writing the example;
#      the example's bytes never change.
# Usage: window_keys.sh FITBENCH SOURCE_DIR. Needs Xvfb, openbox and xdotool (scripts/deps.sh).
set -eu
FITBENCH=$1
SRC=$2
WORK=$(mktemp -d)
XPID=""
WMPID=""
APP=""
cleanup() {
  [ -n "$APP" ] && kill "$APP" 2>/dev/null || true
  [ -n "$WMPID" ] && kill "$WMPID" 2>/dev/null || true
  [ -n "$XPID" ] && kill "$XPID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Xvfb picks a free display itself and writes its number (-displayfd): no race with another
# server starting at the same time. -noreset: by default an X server resets when its last client
# leaves and refuses connections meanwhile, so the probe below closing its connection made the
# next client (openbox, or a second probe) fail now and then.
Xvfb -displayfd 3 -noreset -screen 0 1280x720x24 -nolisten tcp 3>"$WORK/display" \
  >"$WORK/xvfb.log" 2>&1 &
XPID=$!
for _ in $(seq 100); do [ -s "$WORK/display" ] && break; sleep 0.1; done
[ -s "$WORK/display" ] || fail "Xvfb did not start: $(cat "$WORK/xvfb.log")"
export DISPLAY=":$(head -1 "$WORK/display")"
ANSWERED=""
for _ in $(seq 50); do
  xdotool getdisplaygeometry >/dev/null 2>&1 && { ANSWERED=1; break; }
  sleep 0.1
done
[ -n "$ANSWERED" ] || fail "Xvfb did not answer on $DISPLAY: $(cat "$WORK/xvfb.log")"
openbox >"$WORK/openbox.log" 2>&1 &
WMPID=$!
sleep 1
export QT_QPA_PLATFORM=xcb
# The window's session settings go to the scratch folder, not the user's.
export XDG_CONFIG_HOME="$WORK/config"

# Starts the window on $@, waits until it is shown and has the keyboard.
start() {
  "$FITBENCH" --size 1280x720 "$@" >"$WORK/app.log" 2>&1 &
  APP=$!
  WIN=""
  for _ in $(seq 100); do
    WIN=$(xdotool search --onlyvisible --pid "$APP" 2>/dev/null | tail -1) || true
    [ -n "$WIN" ] && break
    kill -0 "$APP" 2>/dev/null || fail "fitbench exited at start: $(cat "$WORK/app.log")"
    sleep 0.1
  done
  [ -n "$WIN" ] || fail "no fitbench window after 10 s"
  xdotool windowactivate --sync "$WIN" >/dev/null 2>&1 || xdotool windowfocus --sync "$WIN"
  sleep 1
}

# Waits up to $1 tenths of a second for the window's process to end; 0 when it did.
ended_within() {
  for _ in $(seq "$1"); do
    kill -0 "$APP" 2>/dev/null || { wait "$APP" 2>/dev/null || true; APP=""; return 0; }
    sleep 0.1
  done
  return 1
}

# Waits up to 10 s for a file that holds a whole JSON document.
json_ready() {
  for _ in $(seq 100); do
    [ -s "$1" ] && /usr/bin/python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$1" \
      2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# --- 1. Step from idle trains one batch -------------------------------------------------------
cp "$SRC/resources/examples/uneven_shards.json" "$WORK/uneven.json"
start "$WORK/uneven.json" --trace "$WORK/trace.json"
for round in 1 2 3; do
  rm -f "$WORK/trace.json"
  xdotool key F10
  sleep 3  # one batch and the hold (seconds to spare under AddressSanitizer)
  xdotool key ctrl+period
  json_ready "$WORK/trace.json" || fail "round $round: no trace after Step and Stop"
  steps=$(/usr/bin/python3 - "$WORK/trace.json" <<'EOF'
import json, sys
events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
print(len({e["args"]["step"] for e in events if "step" in e.get("args", {})}))
EOF
)
  [ "$steps" = 1 ] || fail "round $round: Step from idle trained $steps steps, not 1"
  echo "ok: round $round, Step from idle trained exactly 1 step"
done
xdotool key ctrl+q
ended_within 50 || fail "the window did not close on Ctrl+Q after the Step runs"

# --- 2. Examples open unmodified ----------------------------------------------------------------
for example in seed spiral xor ring_vs_naive model_parallel_2x2; do
  file="$SRC/resources/examples/$example.json"
  before=$(sha256sum "$file")
  start "$file"
  xdotool key ctrl+q
  ended_within 50 || fail "$example.json: Ctrl+Q did not close the untouched example (a dialog?)"
  [ "$(sha256sum "$file")" = "$before" ] || fail "$example.json changed"
  echo "ok: $example.json opened unmodified and closed at once"
done
file="$SRC/resources/examples/xor.json"
before=$(sha256sum "$file")
start "$file"
xdotool key ctrl+s
# Save As: a file dialog, not a write over the example.
DIALOG=""
for _ in $(seq 50); do
  DIALOG=$(xdotool search --onlyvisible --pid "$APP" 2>/dev/null | grep -v "^$WIN\$" | tail -1) || true
  [ -n "$DIALOG" ] && break
  sleep 0.1
done
[ -n "$DIALOG" ] || fail "Ctrl+S on an example opened no Save As dialog"
xdotool key Escape
sleep 0.5
[ "$(sha256sum "$file")" = "$before" ] || fail "Ctrl+S wrote over xor.json"
xdotool key ctrl+q
ended_within 50 || fail "the window did not close after Save As was cancelled"
echo "ok: Ctrl+S on an example asked where to save and left it unchanged"
