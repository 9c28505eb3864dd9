# Sourced by the benchmark scripts that make their inputs with ffmpeg (bench/run.sh, bench/serve.sh,
# scripts/make-poster-bench.sh). `input FILE ffmpeg-args...` writes FILE under a temporary name and renames it
# when complete, beside FILE.recipe holding the arguments: a file is reused only if an earlier run finished
# it with the same recipe, never a half-written or differently made one.
input() {
  local file="$1"; shift
  local recipe="ffmpeg $*"
  if [ -s "$file" ] && [ "$(cat "$file.recipe" 2>/dev/null)" = "$recipe" ]; then return; fi
  rm -f "$file" "$file.recipe"
  local tmp; tmp="$(dirname "$file")/.partial-$$-$(basename "$file")"
  ffmpeg -hide_banner -loglevel error -y "$@" "$tmp" || { rm -f "$tmp"; return 1; }
  mv "$tmp" "$file"
  printf '%s' "$recipe" > "$file.recipe"
}
