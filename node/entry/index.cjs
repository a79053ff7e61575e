// CommonJS entry of the Node build (package.json exports["."].node.require).
'use strict';
module.exports = require('./cjs/node/src/index.js');
