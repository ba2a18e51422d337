// Runs the DEMO backend on its own (the compose stack's `demo` service).
//   DEMO_HOST (127.0.0.1), DEMO_PORT (8081), DEMO_PUBLIC_URL (address clients fetch images from)
import { startDemoBackend } from './backend';

const host = process.env.DEMO_HOST ?? '127.0.0.1';
const port = Number(process.env.DEMO_PORT ?? 8081);

startDemoBackend(host, port, process.env.DEMO_PUBLIC_URL).then((demo) => {
  process.stdout.write(`${JSON.stringify({ service: 'sluice-demo-backend', url: demo.url, msg: 'listening' })}\n`);
  const stop = () => void demo.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}, (err: Error) => {
  process.stderr.write(`demo backend: ${err.message}\n`);
  process.exit(1);
});
