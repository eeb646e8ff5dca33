import { main } from "./daemon.js";

// dist/watch.cjs: the daemon `unwind watch start` spawns, detached: `node dist/watch.cjs <root> <store>`.
void main(process.argv.slice(2));
