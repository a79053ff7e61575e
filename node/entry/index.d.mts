export * from './cjs/node/src/index.js';
