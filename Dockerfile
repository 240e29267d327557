# syntax=docker/dockerfile:1
# agent-bridge image: compiled JavaScript on Node 20, production dependencies only, non-root.
#   docker build -t agent-bridge .
#   docker run --env-file .env -e REDIS_URL=redis://<redis-host>:6379 -p 3000:3000 agent-bridge   (ROLE=all)
# Inside the container 127.0.0.1 is the container itself: REDIS_URL must name a Redis it can
# reach (docker compose runs one for you).
# The same image runs every role; ROLE=ingress|worker picks one (see docs/operations.md).

ARG NODE_IMAGE=node:20-bookworm-slim

# --- deps: every dependency, for the TypeScript build --------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund

# --- build: tsc -p tsconfig.build.json -> dist/ (rootDir '.', so bin/agent-bridge.ts -> dist/bin/agent-bridge.js)
FROM deps AS build
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY adapters ./adapters
RUN npm run build \
 && if [ -d adapters/web/public ]; then mkdir -p dist/adapters/web && cp -R adapters/web/public dist/adapters/web/public; fi \
 && mkdir -p dist/src/queue && cp -R src/queue/scripts dist/src/queue/scripts \
 && test -f dist/bin/agent-bridge.js

# --- prod-deps: production dependencies only -----------------------------------------------
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund

# --- runtime -------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HTTP_HOST=0.0.0.0 \
    HTTP_PORT=3000
WORKDIR /app
# Code and dependencies stay owned by root: the process (user node) can read them, not change them.
COPY package.json ./
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
# Every role serves /healthz; the check reads the port the process was given.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.HTTP_PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The process handles SIGTERM itself: stop ingress, drain workers within SHUTDOWN_TIMEOUT_MS, close Redis.
STOPSIGNAL SIGTERM
CMD ["node", "dist/bin/agent-bridge.js"]
