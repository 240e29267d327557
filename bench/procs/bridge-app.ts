/**
 * A bridge process with the platforms its config names (bin/platforms.ts), as `npm start`
 * runs it: the Slack ingress of scenario 5 (`ROLE=ingress`) and the idle `ROLE=all` process of
 * scenario 6.
 */
import { platformsFor } from '../../bin/platforms.js';
import { serveBridge } from './serve-bridge.js';

await serveBridge((config) => platformsFor(config));
