// Serves the example: `npm run build && npx tsc -p examples/nestjs && node examples/nestjs/dist/main.js`.
import { build } from './app.js';

const { app, demo } = await build();
await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
console.log(`keygate on NestJS at ${await app.getUrl()}; test key (shown once): ${demo.secret}`);
