#include "serve/serve_routes.h"

#include <string>

#include "serve/exposition_writer.h"

namespace limpwatch::cli::serve {

std::vector<Route> BuildRoutes(MetricsPage* metrics) {
  std::vector<Route> routes;
  routes.push_back({"/metrics", [metrics](const HttpRequest&) {
                      HttpResponse response;
                      response.content_type = kExpositionContentType;
                      response.body = metrics->Render();
                      return response;
                    }});
  routes.push_back({"/dashboard", [metrics](const HttpRequest&) {
                      HttpResponse response;
                      response.content_type = "text/html; charset=utf-8";
                      response.body = metrics->Dashboard();
                      return response;
                    }});
  routes.push_back({"/server", [metrics](const HttpRequest& request) {
                      std::optional<std::string> name = QueryParameter(request, "name");
                      if (!name) return TextResponse(400, "expected /server?name=SERVER");
                      std::string page = metrics->ServerPage(*name);
                      if (page.empty()) return TextResponse(404, "no served server named '" + *name + "'");
                      HttpResponse response;
                      response.content_type = "text/html; charset=utf-8";
                      response.body = std::move(page);
                      return response;
                    }});
  // Further pages go here, before the index, which lists them all.
  std::string index = "limpwatch serve: the traced servers of this node\n";
  for (const Route& route : routes) index += "  " + route.path + "\n";
  routes.push_back({"/", [index](const HttpRequest&) {
                      HttpResponse response;
                      response.body = index;
                      return response;
                    }});
  return routes;
}

}  // namespace limpwatch::cli::serve
