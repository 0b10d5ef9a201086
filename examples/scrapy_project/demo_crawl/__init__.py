"""An example Scrapy project that finds its pages with sitemap-reader."""
