// In-process event bus: every published event is kept and handed to the subscribers.

export type Subscriber = (name: string, payload: Record<string, unknown>) => void;

export class Bus {
  readonly published: { name: string; payload: Record<string, unknown> }[] = [];
  private subscribers: Subscriber[] = [];

  subscribe(subscriber: Subscriber): void {
    this.subscribers.push(subscriber);
  }

  publish(name: string, payload: Record<string, unknown>): void {
    this.published.push({ name, payload });
    for (const subscriber of this.subscribers) {
      subscriber(name, payload);
    }
  }
}
