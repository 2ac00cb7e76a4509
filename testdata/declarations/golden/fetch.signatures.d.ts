declare const fetch: {
  fetch(params: {
    url: string;
    max_length?: number;
    start_index?: number;
    raw?: boolean;
  }): Promise<unknown>;
};
