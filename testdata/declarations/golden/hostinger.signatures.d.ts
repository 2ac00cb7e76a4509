declare const hostinger: {
  "hosting_restartNode.jsApplicationV1"(params: {
    username: string;
    domain: string;
  }): Promise<unknown>;
  hosting_restartNode_jsApplicationV1: (typeof hostinger)["hosting_restartNode.jsApplicationV1"];
  hosting_listWebsitesV1(params?: {
    page?: number;
  }): Promise<unknown>;
  VPS_getVirtualMachinesV1(): Promise<unknown>;
};
