#include "sohusim/profiler/report_style.hpp"

namespace sohusim::profiler {

std::string report_stylesheet(int content_width_px) {
  return std::string(
             "body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;font-size:13px;color:#222;margin:0;"
             "background:#fff}\n") +
         "main{max-width:" + std::to_string(content_width_px + 40) + "px;margin:0 auto;padding:8px 20px 40px}\n" +
         "h1{font-size:22px;margin:16px 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid "
         "#ccc;padding-bottom:3px}h3{font-size:14px;margin:16px 0 6px}\n"
         ".subtitle{color:#666;margin:0 0 12px}\n"
         "table.data{border-collapse:collapse;margin:6px 0 10px}\n"
         "table.data th,table.data td{border:1px solid #ddd;padding:2px 7px;text-align:right;"
         "white-space:nowrap}\n"
         "table.data th{background:#f2f2f2;text-align:center}table.data td.t{text-align:left;white-space:normal;"
         "word-break:break-all}\n"
         "table.data tr:nth-child(even) td{background:#fafafa}\n"
         "svg.chart{display:block;margin:6px 0 12px;font-size:11px;background:#fff}\n"
         "svg.chart text{fill:#333}\n"
         ".no-data{color:#888;font-style:italic}\n"
         "nav a{margin-right:12px;color:#35c}\n";
}

}  // namespace sohusim::profiler
