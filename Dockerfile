# tunnel-manager: keeps SSH tunnels up (see docs/docker.md).
#
#   docker build -t tunnel-manager .
#
# No "# syntax=" line on purpose: it makes BuildKit fetch a frontend image from Docker
# Hub, and the build must work where only Debian's mirror and the npm registry answer.
#
# The base needs Node >= 20.19 (chokidar 5 and cac 7); Debian bookworm brings
# util-linux setpriv, which the entrypoint uses to drop to PUID/PGID.
ARG NODE_IMAGE=node:20-bookworm-slim

# --- toolchain: node-pty (the interactive tunnels' terminals) has no Linux prebuild,
# so npm compiles it; the compilers stay in the build stages, not in the image.
# node-gyp compiles against the base image's own headers (/usr/local/include/node in the
# official images): without npm_config_nodedir it downloads them from nodejs.org, and
# where that fails npm drops the optional node-pty without a word.
FROM ${NODE_IMAGE} AS toolchain
ENV npm_config_nodedir=/usr/local
RUN test -f /usr/local/include/node/node_version.h \
  || { echo "the base image has no Node headers at /usr/local/include/node (node-pty is compiled against them)" >&2; exit 1; }
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*

# --- build: dev dependencies, TypeScript -> dist/, packed as npm would publish it
FROM toolchain AS build
WORKDIR /src
RUN node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<20||(a===20&&b<19)) { console.error("Node >= 20.19 is needed, the base image has " + process.version); process.exit(1) }'
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.mjs ./scripts/
COPY src ./src
RUN npm run build \
 && npm pack --silent --pack-destination /tmp \
 && mkdir /out \
 && tar -xzf /tmp/tunnel-manager-*.tgz -C /out --strip-components=1

# --- production dependencies only, from the same lock file (node-pty compiled here;
# it is optional for npm, which skips it silently when it does not build, so the stage
# fails unless it loads and opens a terminal: the image must have it)
FROM toolchain AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --foreground-scripts \
 && node -e 'const p = require("node-pty").spawn("/bin/sh", ["-c", "exit 7"], {}); p.onExit(({ exitCode }) => process.exit(exitCode === 7 ? 0 : 1))' \
  || { echo "node-pty did not build or load: the image needs it for interactive tunnels (see the npm output above)" >&2; exit 1; } \
 && npm cache clean --force

# --- runtime
FROM ${NODE_IMAGE} AS runtime
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="tunnel-manager" \
      org.opencontainers.image.description="Keeps SSH tunnels up, with an HTTP API, a CLI, a web panel and an OpenAI-compatible chat proxy" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.documentation="docs/docker.md"

# openssh-client runs the tunnels; tini is PID 1 (forwards signals, reaps zombies).
# The base image's "node" account (uid 1000) would shadow a PUID of 1000, so it goes;
# "tunnel" is renumbered to PUID/PGID by the entrypoint at every start, which also
# hands the empty /config and the state volume to that uid.
RUN apt-get update \
 && apt-get install -y --no-install-recommends openssh-client tini \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
 && userdel --remove node \
 && groupadd --gid 911 tunnel \
 && useradd --uid 911 --gid tunnel --home-dir /home/tunnel --no-create-home --shell /usr/sbin/nologin tunnel \
 && install -d -m 755 /home/tunnel /config /var/lib/tunnel-manager /home/myuser \
 && ln -s /home/tunnel/.ssh /home/myuser/.ssh

WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /out/ ./
COPY docker/entrypoint.sh /usr/local/bin/tunnel-entrypoint
COPY docker/healthcheck.mjs /usr/local/lib/tunnel-manager/healthcheck.mjs
RUN chmod 755 /usr/local/bin/tunnel-entrypoint \
 && printf '#!/bin/sh\nexec node /app/dist/main.js "$@"\n' > /usr/local/bin/tunnel-manager \
 && printf '#!/bin/sh\nexec node /app/dist/cli/main.js "$@"\n' > /usr/local/bin/tunnel-cli \
 && chmod 755 /usr/local/bin/tunnel-manager /usr/local/bin/tunnel-cli

# Every path the entrypoint and the daemon use. SSH_DIR is where ~/.ssh is mounted
# (read-only): the account's home, so that "~/.ssh/..." in the SSH config works.
# autossh-tunnel-dockerized mounts it at /home/myuser/.ssh, and SSH configs written for
# it name keys by that path: /home/myuser/.ssh is a link to /home/tunnel/.ssh, so those paths
# work, and so does a volume mounted there (engines follow the link inside the image).
ENV NODE_ENV=production \
    HOME=/home/tunnel \
    TUNNEL_USER=tunnel \
    SSH_DIR=/home/tunnel/.ssh \
    SSH_CONFIG=/home/tunnel/.ssh/config \
    TUNNEL_CONFIG=/config/config.yaml \
    TUNNEL_STATE_DIR=/var/lib/tunnel-manager \
    TUNNEL_SOCKET=/run/tunnel-manager/api.sock \
    PANEL_LISTEN=127.0.0.1:5000 \
    TUNNEL_DIRECTION_MODE=default

# The daemon's API (and /v1 chat proxy) and the panel. With host networking (see
# compose.yaml) these are documentation; both bind loopback by default.
EXPOSE 8080 5000
VOLUME ["/config", "/var/lib/tunnel-manager"]

HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["node", "/usr/local/lib/tunnel-manager/healthcheck.mjs"]

# The entrypoint starts as root to apply PUID/PGID, then runs the daemon unprivileged.
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/tunnel-entrypoint"]
CMD []
