declare const redis: {
  set(params: {
    key: string;
    value: string;
    expireSeconds?: number;
  }): Promise<unknown>;
  get(params: {
    key: string;
  }): Promise<unknown>;
  "delete"(params: {
    key: string | string[];
  }): Promise<unknown>;
  list(params?: {
    pattern?: string;
  }): Promise<unknown>;
};
