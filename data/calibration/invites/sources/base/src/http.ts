// A minimal in-process HTTP app: routes are (method, path) pairs mapped to handlers.

export interface Request {
  method: string;
  path: string;
  body: unknown;
}

export interface Response {
  status: number;
  body: unknown;
}

export type Handler = (request: Request) => Promise<Response>;

export class App {
  private routes = new Map<string, Handler>();

  route(method: string, path: string, handler: Handler): void {
    this.routes.set(`${method.toUpperCase()} ${path}`, handler);
  }

  async handle(request: Request): Promise<Response> {
    const handler = this.routes.get(`${request.method.toUpperCase()} ${request.path}`);
    if (handler === undefined) {
      return { status: 404, body: { error: "not found" } };
    }
    return handler(request);
  }
}
