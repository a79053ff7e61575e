#!/usr/bin/env node
// The demo page (web/demo/) in headless Chromium: it must find the text of its sample image (boxes drawn: red
// pixels in the overlay, at least two boxes for two lines), and its exact-mode hash must equal the native
// build's. Saves a screenshot to build/demo.png. Prints `demo: N passed, M failed`.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { startDemo } from '../../web/demo/serve.mjs';
import { checks } from '../checks.mjs';
import { launchChromium } from '../../tools/chromium.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { check, summary } = checks('demo');

let server;
let browser;
try {
  server = await startDemo(0);
  browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 900, height: 700 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => window.__demo !== undefined, null, { timeout: 120_000 });
  const demo = await page.evaluate(() => window.__demo);
  const red = await page.evaluate(() => {
    const c = document.getElementById('overlay');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] > 200 && d[i + 1] < 60 && d[i + 2] < 60 && d[i + 3] > 200) n++;
    return n;
  });
  mkdirSync(join(root, 'build'), { recursive: true });
  await page.screenshot({ path: join(root, 'build', 'demo.png') });
  check(
    'the demo page detects the sample text and draws boxes',
    !demo.error && demo.boxes.length >= 2 && red > 200,
    demo.error ??
      `${demo.boxes.length} boxes, ${red} red overlay pixels, ${demo.ms.toFixed(1)} ms on ${demo.kernelPath}`,
  );
  // The page asks for min(4, cores) wasm threads and is served cross-origin isolated: it must get them.
  const cores = await page.evaluate(() => navigator.hardwareConcurrency || 1);
  check(
    'the demo page runs on min(4, cores) wasm threads (served cross-origin isolated)',
    !demo.error && demo.threads === Math.min(4, cores),
    demo.error ?? `${demo.threads} thread(s), ${cores} cores`,
  );
  check(
    "the page's exact-mode hash equals the native build's",
    !demo.error && demo.same,
    demo.error ?? `page ${demo.hash.slice(0, 16)}, native ${String(demo.native).slice(0, 16)}`,
  );
  if (errors.length) check('no page errors', false, errors.join(' | '));
} catch (e) {
  check('demo harness', false, String(e && e.stack ? e.stack : e).slice(0, 400));
} finally {
  await browser?.close();
  server?.close();
}
process.exit(summary() ? 0 : 1);
