// HTTP routes of the invites service.

import type { Bus } from "./bus";
import { isValidEmail } from "./email";
import { App } from "./http";
import { createInvite } from "./invites";
import type { Store } from "./store";

export function createApp(store: Store, bus: Bus, now: () => Date): App {
  const app = new App();

  app.route("POST", "/invites", async (request) => {
    const body = (request.body ?? {}) as { email?: unknown; inviterId?: unknown };
    if (!isValidEmail(body.email)) {
      return { status: 422, body: { error: "a valid email is required" } };
    }
    const invite = await createInvite(store, bus, body.email, String(body.inviterId), now());
    return { status: 201, body: { id: invite.id, inviterId: invite.inviterId } };
  });

  return app;
}
