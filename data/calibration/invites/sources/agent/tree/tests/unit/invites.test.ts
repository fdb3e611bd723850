import { describe, expect, it } from "vitest";

import { Bus } from "../../src/bus";
import { createInvite } from "../../src/invites";
import { Store } from "../../src/store";

describe("createInvite", () => {
  it("publishes invite_created with the invite id", async () => {
    const bus = new Bus();
    const invite = await createInvite(new Store(), bus, "ada@example.com", "u1", new Date(0));
    expect(bus.published[0].name).toBe("invite_created");
    expect(bus.published[0].payload.inviteId).toBe(invite.id);
  });
});
