// Entry point: the service with its in-memory store and event bus.

import { createApp } from "./app";
import { Bus } from "./bus";
import { Store } from "./store";

export const app = createApp(new Store(), new Bus(), () => new Date());
