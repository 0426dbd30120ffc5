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
# glibc maps an allocation over this size on its own and unmaps it when freed. Left dynamic,
# the threshold rises to the largest block freed (up to 32 MiB), so a load's scratch arrays
# below that stay resident in the allocator's heaps after the build: about 0.3x of the
# Arrow bytes of a 4M-row generation (README, Sizing). 4 MiB keeps request-sized buffers
# in the heap.
ENV MALLOC_MMAP_THRESHOLD_=4194304
WORKDIR /app
COPY package.json package-lock.json ./
# uWebSockets.js (a native build for glibc, Node 20) comes with the production dependencies.
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/dist ./dist
USER 10001:10001
EXPOSE 8080 9464
ENTRYPOINT ["node", "dist/src/cli/main.js"]
CMD ["serve", "--host", "0.0.0.0"]
