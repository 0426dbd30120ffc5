# pitcache: build with the dev toolchain, run on production dependencies only, as non-root.
# docker build -t pitcache . && docker run -p 8080:8080 pitcache serve --demo --host 0.0.0.0
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# uWebSockets.js (a native build for glibc, Node 20) comes with the production dependencies.
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/dist ./dist
USER 10001:10001
EXPOSE 8080 9464
ENTRYPOINT ["node", "dist/src/cli/main.js"]
CMD ["serve", "--host", "0.0.0.0"]
