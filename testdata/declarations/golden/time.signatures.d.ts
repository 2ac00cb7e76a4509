declare const time: {
  get_current_time(params: {
    timezone: string;
  }): Promise<unknown>;
  convert_time(params: {
    source_timezone: string;
    time: string;
    target_timezone: string;
  }): Promise<unknown>;
};
