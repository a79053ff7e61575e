// The one way the tests and tools start a browser: Debian's Chromium (CHROMIUM_PATH overrides) through
// playwright-core, headless, without the sandbox (CI runs as root) and without background traffic (updates,
// sync, QUIC) that could stall a run on a machine with no network. playwright-core is imported lazily so a
// caller can report a missing install instead of failing at import.
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-quic',
  '--no-first-run',
  '--disable-sync',
];

export async function launchChromium() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: chromiumPath, timeout: 30_000, args: chromiumArgs });
}
