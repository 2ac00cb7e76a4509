declare const everything: {
  echo(params: {
    message: string;
  }): Promise<unknown>;
  "get-sum"(params: {
    a: number;
    b: number;
  }): Promise<unknown>;
  get_sum: (typeof everything)["get-sum"];
  "get-structured-content"(params: {
    location: "New York" | "Chicago" | "Los Angeles";
  }): Promise<{
    temperature: number;
    conditions: string;
    humidity: number;
  }>;
  get_structured_content: (typeof everything)["get-structured-content"];
  "get-tiny-image"(): Promise<unknown>;
  get_tiny_image: (typeof everything)["get-tiny-image"];
  "gzip-file-as-resource"(params?: {
    name?: string;
    data?: string;
    outputType?: "resourceLink" | "resource";
  }): Promise<unknown>;
  gzip_file_as_resource: (typeof everything)["gzip-file-as-resource"];
  "trigger-long-running-operation"(params?: {
    duration?: number;
    steps?: number;
  }): Promise<unknown>;
  trigger_long_running_operation: (typeof everything)["trigger-long-running-operation"];
  "simulate-research-query"(params: {
    topic: string;
    ambiguous?: boolean;
  }): Promise<unknown>;
  simulate_research_query: (typeof everything)["simulate-research-query"];
  "get-env"(): Promise<unknown>;
  get_env: (typeof everything)["get-env"];
};
