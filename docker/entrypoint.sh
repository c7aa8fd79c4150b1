#!/bin/sh
# Container entrypoint for tunnel-manager.
#
# It runs as root only long enough to give the image's account the host user's
# uid/gid (PUID/PGID), check the mounted SSH directory and create the state and
# socket folders; then it replaces itself (exec) with the command run as that user
# through util-linux setpriv, so that the init's signals reach the daemon directly.
# Every path comes from the environment (the Dockerfile sets them), so the same
# script runs outside a container, which is how it is tested.
#
#   (no argument), serve, or --flags   the daemon; the SSH directory must be right when there is one
#   check                              tunnel-manager check (it reports SSH problems itself)
#   panel, proxy                       the web panel / the chat proxy alone
#   anything else                      run as given, as the unprivileged user
#
# The wording of the SSH directory problems is shared with `tunnel-manager check`
# (src/check/rules.ts); change both together.
set -eu

prog=entrypoint

die() {
  code=$1
  shift
  printf '%s: %s\n' "$prog" "$*" >&2
  exit "$code"
}

warn() {
  printf '%s: warning: %s\n' "$prog" "$*" >&2
}

# Quotes a path for a command line to paste, the same way src/check/rules.ts does;
# a leading ~/ stays outside the quotes so that the shell still expands it.
quote() {
  case $1 in
    '~/'*) printf '~/%s' "$(quote "${1#'~/'}")" ;;
    '' | *[!A-Za-z0-9_@%+=:,./~-]*)
      printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
      ;;
    *) printf '%s' "$1" ;;
  esac
}

# --- settings ---------------------------------------------------------------

for name in SSH_DIR SSH_CONFIG TUNNEL_CONFIG TUNNEL_STATE_DIR TUNNEL_SOCKET; do
  eval "value=\${$name:-}"
  [ -n "$value" ] || die 2 "$name is not set: it must name a path (the image sets it; see docs/docker.md)"
done

check_id() {
  # $1 variable name, $2 its value, $3 "user" or "group", $4 the command that prints it
  [ -n "$2" ] || die 2 "$1 is not set: set it to the numeric $3 id of the host user who owns the SSH directory (run '$4' on the host)"
  case $2 in
    *[!0-9]*) die 2 "$1 must be a number (the output of '$4' on the host), got '$2'" ;;
  esac
  [ "${#2}" -le 10 ] || die 2 "$1 is out of range, got '$2'"
}
# Unset, they default to 1000 as in autossh-tunnel-dockerized, with a word: the right
# value is the host user's, and 1000 is only a guess.
if [ -z "${PUID:-}" ]; then
  warn "PUID is not set: using 1000 (the default of autossh-tunnel-dockerized); set PUID to the uid that owns the SSH directory (run 'id -u' on the host)"
  PUID=1000
fi
if [ -z "${PGID:-}" ]; then
  warn "PGID is not set: using 1000 (the default of autossh-tunnel-dockerized); set PGID to that user's group (run 'id -g' on the host)"
  PGID=1000
fi
check_id PUID "$PUID" user 'id -u'
check_id PGID "$PGID" group 'id -g'
# "01000" and "1000" are the same id (printf %d would read a leading 0 as octal).
PUID=$(printf '%s' "$PUID" | sed 's/^0*//')
PUID=${PUID:-0}
PGID=$(printf '%s' "$PGID" | sed 's/^0*//')
PGID=${PGID:-0}
[ "$PUID" -ne 0 ] || die 2 "PUID is 0 (root): tunnel-manager runs as an unprivileged user; set PUID to your own uid (run 'id -u' on the host)"

# Started with --user (or runAsUser): nothing to switch, so the ids must agree.
if [ "$(id -u)" -ne 0 ] && [ "$(id -u)" != "$PUID" ]; then
  die 2 "the container runs as uid $(id -u) but PUID is $PUID: drop --user (the entrypoint switches to PUID itself) or make them equal"
fi

# Optional secrets set to "" by compose mean "not set".
for name in TUNNEL_API_TOKEN API_KEY PANEL_TOKEN; do
  eval "value=\${$name:-}"
  [ -n "$value" ] || unset "$name"
done

SSH_DIR=${SSH_DIR%/}
SSH_DIR=${SSH_DIR:-/}
# What the user knows the SSH directory as on the host, for the fix commands.
ssh_dir_shown=${SSH_DIR_HOST:-$SSH_DIR}
ssh_dir_shown=${ssh_dir_shown%/}

# --- command ----------------------------------------------------------------

mode=exec
if [ "$#" -eq 0 ]; then
  mode=serve
  set -- tunnel-manager
else
  case $1 in
    serve | -*) mode=serve && set -- tunnel-manager "$@" ;;
    check | panel | proxy | migrate) mode=$1 && set -- tunnel-manager "$@" ;;
  esac
fi

# --- the SSH directory ------------------------------------------------------

# The rules and sentences of src/check/rules.ts: what ssh itself refuses stops the
# start (a private key of ours others can read, a config file others can write or
# another user owns); what it accepts but could be tighter is a warning.
problems=0

shown() {
  case $1 in
    "$SSH_DIR") printf '%s' "$ssh_dir_shown" ;;
    "$SSH_DIR"/*) printf '%s%s' "$ssh_dir_shown" "${1#"$SSH_DIR"}" ;;
    *) printf '%s' "$1" ;;
  esac
}

report=''
warnings=''
nl='
'
problem() {
  # $1 where, $2 what is wrong, $3 the fix (may be empty)
  problems=$((problems + 1))
  report="$report- $1: $2$nl"
  [ -z "$3" ] || report="$report  fix: $3$nl"
}
managed=0
warning() {
  # What ssh accepts in a Kubernetes volume is as the manifest made it: no warning.
  [ "$managed" = 0 ] || return 0
  warnings="$warnings- $1: $2$nl  fix: $3$nl"
}

# Public keys and known_hosts are not secret: group/other may read them, not write.
is_public() {
  case ${1##*/} in
    *.pub | known_hosts | known_hosts2 | known_hosts.old | authorized_keys | authorized_keys2) return 0 ;;
  esac
  return 1
}

# A file of a Kubernetes Secret or ConfigMap volume (src/check/kubelet-volume.ts): a
# folder holding a ..data link, or a path whose real path lies under the ..data target
# of a folder above it. Its mode and owner come from the manifest, so that is where its fix is.
kubelet_managed() {
  [ -L "$1/..data" ] && return 0
  real=$(realpath -e "$1" 2>/dev/null) || return 1
  dir=$(dirname "$real")
  while :; do
    if [ -L "$dir/..data" ]; then
      data=$(realpath -e "$dir/..data" 2>/dev/null) && case $real in "$data"/*) return 0 ;; esac
    fi
    up=$(dirname "$dir")
    [ "$up" != "$dir" ] || return 1
    dir=$up
  done
}

is_private_key() {
  head -c 64 "$1" 2>/dev/null | head -n 1 | grep -Eq '^-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----'
}

ssh_config_real=$(realpath -m "$SSH_CONFIG" 2>/dev/null || printf '%s' "$SSH_CONFIG")

check_entry() {
  # $1 path, $2 d or f, $3 octal mode, $4 owner uid
  where=$(shown "$1")
  q=$(quote "$where")
  open=$((0$3 & 077))
  managed=0
  ! kubelet_managed "$1" || managed=1
  if [ "$2" = d ]; then
    [ "$open" -eq 0 ] || warning "$where" "mode is $3; ssh accepts it, 700 keeps the folder private" "chmod 700 $q"
  elif [ "$(realpath -m "$1" 2>/dev/null || printf '%s' "$1")" = "$ssh_config_real" ]; then
    if [ $((0$3 & 022)) -ne 0 ]; then
      if [ "$managed" = 1 ]; then
        problem "$where" "mode is $3: ssh refuses a config file that group or others can write" "in the manifest, set defaultMode: 0440 (or 0400) on the volume"
      else
        problem "$where" "mode is $3: ssh refuses a config file that group or others can write" "chmod 600 $q"
      fi
    elif [ "$open" -ne 0 ]; then
      warning "$where" "mode is $3; ssh accepts it, 600 keeps it private" "chmod 600 $q"
    fi
    if [ "$4" != "$PUID" ] && [ "$4" != 0 ]; then
      problem "$where" "owned by uid $4: ssh refuses a config file owned by another user than uid $PUID or root" "sudo chown $PUID $q"
      return
    fi
  elif is_public "$1"; then
    [ $((0$3 & 022)) -eq 0 ] ||
      warning "$where" "mode is $3; ssh accepts it, but others should not write it (644 is fine for public keys and known_hosts)" "chmod 644 $q"
  elif is_private_key "$1"; then
    # ssh's rule: only its own user's key must be closed to group and others.
    if [ "$open" -ne 0 ] && [ "$4" = "$PUID" ]; then
      if [ "$managed" = 1 ]; then
        problem "$where" "mode is $3 and owned by uid $4, the user ssh runs as: ssh refuses its own private key when group or others can read it, and chmod cannot change a file of a Kubernetes Secret volume" "in the manifest, set defaultMode: 0400 on the Secret volume and no fsGroup (fsGroup adds group read), or run as a uid other than $4 (runAsUser) with fsGroup, so that ssh reads the key through its group"
      else
        problem "$where" "mode is $3: ssh refuses a private key that group or others can read" "chmod 600 $q"
      fi
    fi
  else
    [ "$open" -eq 0 ] || warning "$where" "mode is $3; ssh accepts it, 600 keeps it private" "chmod 600 $q"
  fi
  [ "$4" = "$PUID" ] ||
    warning "$where" "owned by uid $4, not by uid $PUID (the user tunnel-manager runs as)" "sudo chown $PUID $q"
}

ssh_dir_missing=0
check_ssh_dir() {
  # ssh needs the SSH directory only once a tunnel runs: without one the daemon starts
  # (a config with no tunnels, the panel, the API), and each tunnel fails with ssh's
  # reason (the config file it cannot open) until the folder is mounted.
  if [ ! -e "$SSH_DIR" ]; then
    ssh_dir_missing=1
    return
  fi
  if [ ! -d "$SSH_DIR" ]; then
    problem "$(shown "$SSH_DIR")" "is not a directory" ""
    return
  fi
  check_entry "$SSH_DIR" d "$(stat -L -c %a "$SSH_DIR")" "$(stat -L -c %u "$SSH_DIR")"
  # Symbolic links are judged by what they point to, as ssh does. Sorted by path
  # (C locale), the order `tunnel-manager check` uses.
  tab=$(printf '\t')
  # The kubelet's own names (..data, ..2026_…) are skipped: their files are judged
  # once, by the names the Secret gives them.
  listing=$(find -L "$SSH_DIR" -mindepth 1 -name '..?*' -prune -o \( -type d -o -type f \) -printf '%p\t%y\t%m\t%U\n' 2>/dev/null |
    LC_ALL=C sort)
  while IFS=$tab read -r path kind perm owner; do
    [ -z "$path" ] || check_entry "$path" "$kind" "$perm" "$owner"
  done <<LISTING
$listing
LISTING
  [ -f "$SSH_CONFIG" ] || {
    c=$(quote "$(shown "$SSH_CONFIG")")
    problem "$(shown "$SSH_CONFIG")" "the SSH config file does not exist (tunnels take host names, users and keys from it)" "touch $c && chmod 600 $c"
  }
}

if [ "$mode" = serve ]; then
  check_ssh_dir
  if [ "$ssh_dir_missing" = 1 ]; then
    warn "the SSH directory $ssh_dir_shown does not exist: starting without it; tunnels cannot run until it is there (ssh takes host names, users and keys from $(shown "$SSH_CONFIG")): mount your SSH directory there read-only, e.g. -v ~/.ssh:$SSH_DIR:ro (docs/docker.md)"
  fi
  if [ -n "$warnings" ]; then
    printf '%s: warning: the SSH directory %s works (ssh accepts these); to make it private, run on the host:\n%s' "$prog" "$ssh_dir_shown" "$warnings" >&2
  fi
  if [ "$problems" -gt 0 ]; then
    {
      if kubelet_managed "$SSH_DIR"; then
        # A Kubernetes Secret: the fixes are the manifest's, and the pod is made anew from it.
        printf '%s: the SSH directory %s is not usable (ssh refuses these); change the pod'"'"'s manifest:\n' "$prog" "$ssh_dir_shown"
        printf '%s' "$report"
        printf '%s: then apply it.\n' "$prog"
      else
        printf '%s: the SSH directory %s is not usable (ssh refuses these); run on the host:\n' "$prog" "$ssh_dir_shown"
        printf '%s' "$report"
        owners=$(find -L "$SSH_DIR" -maxdepth 0 -printf '%U\n' 2>/dev/null || true)
        if [ -n "$owners" ] && [ "$owners" != "$PUID" ]; then
          printf '%s: if uid %s is your user on the host, set PUID=%s instead of changing owners.\n' "$prog" "$owners" "$owners"
        fi
        printf '%s: then start the container again.\n' "$prog"
      fi
    } >&2
    exit 1
  fi
fi

# --- the account ------------------------------------------------------------

as_user() {
  if [ "$(id -u)" -eq 0 ]; then
    setpriv --reuid="$PUID" --regid="$PGID" --clear-groups -- "$@"
  else
    "$@"
  fi
}

if [ "$(id -u)" -ne 0 ]; then
  mkdir -p "$TUNNEL_STATE_DIR" "$(dirname "$TUNNEL_SOCKET")" ||
    die 1 "uid $PUID cannot create $TUNNEL_STATE_DIR or $(dirname "$TUNNEL_SOCKET") (TUNNEL_STATE_DIR, TUNNEL_SOCKET)"
else
  # TUNNEL_USER names the image's account, renumbered to PUID/PGID: ssh needs an
  # account for its uid (it reads the home directory from /etc/passwd). Its line
  # goes right after root's, so that it wins over any other account with that uid.
  if [ -n "${TUNNEL_USER:-}" ]; then
    grep -q "^$TUNNEL_USER:" /etc/passwd ||
      die 2 "TUNNEL_USER is '$TUNNEL_USER' but /etc/passwd has no such account"
    tmp=$(mktemp)
    awk -F: -v OFS=: -v u="$TUNNEL_USER" -v id="$PUID" -v gid="$PGID" '
      $1 == u { $3 = id; $4 = gid; mine = $0; next }
      { rest[++n] = $0 }
      END {
        print rest[1]; print mine
        for (i = 2; i <= n; i++) print rest[i]
      }' /etc/passwd >"$tmp"
    cat "$tmp" >/etc/passwd
    if grep -q "^$TUNNEL_USER:" /etc/group; then
      awk -F: -v OFS=: -v u="$TUNNEL_USER" -v gid="$PGID" '$1 == u { $3 = gid } { print }' /etc/group >"$tmp"
      cat "$tmp" >/etc/group
    fi
    rm -f "$tmp"
    HOME=$(awk -F: -v u="$TUNNEL_USER" '$1 == u { print $6 }' /etc/passwd)
    USER=$TUNNEL_USER
    LOGNAME=$TUNNEL_USER
    export HOME USER LOGNAME
  elif ! getent passwd "$PUID" >/dev/null; then
    warn "uid $PUID has no account in /etc/passwd and ssh refuses to run without one; set TUNNEL_USER to an account this script may renumber"
  fi

  # --- folders ---------------------------------------------------------------

  # The state dir is the product's own: created and handed to PUID.
  mkdir -p "$TUNNEL_STATE_DIR"
  [ "$(stat -c %u "$TUNNEL_STATE_DIR")" = "$PUID" ] || chown -R "$PUID:$PGID" "$TUNNEL_STATE_DIR"
  chmod 700 "$TUNNEL_STATE_DIR"

  # Folders that may be shared (/tmp, a bind mount) are only created, never re-owned,
  # except an empty root-owned one: that is what Docker makes for a missing bind source.
  for dir in "$(dirname "$TUNNEL_SOCKET")" "$(dirname "$TUNNEL_CONFIG")"; do
    if [ ! -d "$dir" ]; then
      mkdir -p "$dir"
      chown "$PUID:$PGID" "$dir"
    elif [ "$(stat -c %u "$dir")" = 0 ] && [ -z "$(ls -A "$dir")" ]; then
      chown "$PUID:$PGID" "$dir"
    fi
  done
fi

as_user test -w "$(dirname "$TUNNEL_SOCKET")" ||
  die 1 "uid $PUID cannot write $(dirname "$TUNNEL_SOCKET") (the folder of TUNNEL_SOCKET); fix: chown $PUID:$PGID $(quote "$(dirname "$TUNNEL_SOCKET")")"
if [ "$mode" = panel ]; then
  as_user test -w "$(dirname "$TUNNEL_CONFIG")" ||
    die 1 "uid $PUID cannot write $(dirname "$TUNNEL_CONFIG"), where the panel saves the config file (./config in compose.yaml); fix on the host: sudo chown $PUID:$PGID <that folder>"
fi

# --- run --------------------------------------------------------------------

if [ "$(id -u)" -eq 0 ]; then
  exec setpriv --reuid="$PUID" --regid="$PGID" --clear-groups --inh-caps=-all --no-new-privs -- "$@"
fi
exec "$@"
